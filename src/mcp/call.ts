/**
 * `tools/call` on one connection, as a tool's `execute`: the answer flattened (result.ts), a
 * server's `isError` an error result, an answer that is not a result a typed error saying the
 * call's effect is unknown. A `resource_link` in the answer names the call that reads it, when
 * the server serves resources. A question the server asks during the call goes to the call's
 * person (questions.ts): in the 2025 era while the call is open, in the 2026 era as an
 * `input_required` answer, after which the call is sent again with the answers and the
 * server's `requestState` as it came.
 */
import { Effect } from "effect"
import { InputRound } from "../prompt/input-round.ts"
import { fail, type ToolFailure } from "../tool/errors.ts"
import type { ToolContext, ToolOutput } from "../tool/tool.ts"
import { type LoginNeeded, loginNeededIn } from "./auth/login-needed.ts"
import { offerLogin } from "./call-login.ts"
import type { McpCaller } from "./convert.ts"
import { type McpLink, rawRequest, requestFailure } from "./link.ts"
import { type ParamHeader, paramHeaders } from "./param-headers.ts"
import { type Asker, type CanVisit, type HostAsker, questionOf, relay, type Waiting } from "./questions.ts"
import { READ_RESOURCE_TOOL } from "./resource-names.ts"
import { flattenResult, resultProblem } from "./result.ts"

/** A server asking more rounds than this in one call is stopped (as the SDK's own driver does). */
const MAX_ROUNDS = 10
/** A round with only a state and no question is sent again after this pause, not at once. */
const STATE_ONLY_PAUSE_MS = 100

const isRecord = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)

/** The line that tells the model how to follow the links of an answer. */
const followLinks = (link: McpLink, links: unknown): string | undefined => {
  if (!link.resources || !Array.isArray(links) || links.length === 0) return undefined
  const first = (links[0] as { uri?: unknown }).uri
  const example = JSON.stringify({ server: link.server, uri: typeof first === "string" ? first : "…" })
  return `(read a linked resource with ${READ_RESOURCE_TOOL} ${example})`
}

/** The answer as the model reads it. */
const outputOf = (link: McpLink, tool: string, raw: unknown): Effect.Effect<ToolOutput, ToolFailure> => {
  const problem = resultProblem(raw)
  if (problem !== undefined) {
    return Effect.fail(
      fail(
        `The ${link.server} MCP server answered ${tool} with something that is not a tool result (${problem}); the call's effect is unknown. Check its effect another way before calling again.`
      )
    )
  }
  const flat = flattenResult(raw)
  if (flat.isError) {
    return Effect.fail(
      fail(flat.output === "" ? `${tool} failed and the server gave no reason.` : flat.output, flat.metadata)
    )
  }
  const follow = followLinks(link, flat.metadata.resourceLinks)
  return Effect.succeed({
    title: `${link.server}: ${tool}`,
    output: follow === undefined ? flat.output : `${flat.output}\n${follow}`,
    metadata: { ...flat.metadata, mcpServer: link.server }
  })
}

/**
 * The call, its `input_required` rounds answered (2026 era): each question in a round asked in
 * turn, then the call sent again with the answers and the state; a question nobody can answer
 * ends the call with the refusal, and the server's state is dropped unsent.
 */
const callRounds = (
  link: McpLink,
  tool: string,
  params: Record<string, unknown>,
  ask: Asker,
  headers: Readonly<Record<string, string>> | undefined,
  offer: Offer | undefined
): Effect.Effect<unknown, ToolFailure> =>
  Effect.gen(function* () {
    const modern = link.era === "2026-07-28"
    let offered = false
    const once = (p: Record<string, unknown>) => rawRequest(link, "tools/call", p, link.timeoutMs, modern, headers)
    // Refused for want of a login: offered to the person once per call, then sent again (it never ran).
    const send = (p: Record<string, unknown>) =>
      once(p).pipe(
        Effect.catch((e) => {
          const needed = loginNeededIn(e)
          if (offered || offer === undefined || needed?.kind !== "login") return Effect.fail(e)
          offered = true
          return Effect.flatMap(offer(needed), (came) =>
            came === "logged-in"
              ? once(p)
              : Effect.fail(came.why === undefined ? e : new LoginRefused(requestFailure(link, tool, e), came.why))
          )
        }),
        Effect.mapError((e) => (e instanceof LoginRefused ? e.failure : requestFailure(link, tool, e)))
      )
    let raw = yield* send(params)
    for (let round = 1; isRecord(raw) && raw.resultType === "input_required"; round++) {
      if (round > MAX_ROUNDS)
        return yield* fail(
          `The ${link.server} MCP server asked for input ${MAX_ROUNDS} times in one call of ${tool} without finishing; the call was stopped and its effect is unknown.`
        )
      const requests = isRecord(raw.inputRequests) ? raw.inputRequests : {}
      const answers: Record<string, unknown> = {}
      for (const [key, entry] of Object.entries(requests)) {
        const method = isRecord(entry) ? entry.method : undefined
        if (method !== "elicitation/create")
          return yield* fail(
            `The ${link.server} MCP server asked this client for ${String(method)} during ${tool}, which it does not offer (only questions for the person); the call did not finish.`
          )
        const question = questionOf((entry as Record<string, unknown>).params)
        if (typeof question === "string")
          return yield* fail(
            `The ${link.server} MCP server asked the person something during ${tool}, but the question is malformed (${question}); the call did not finish.`
          )
        const relayed = yield* relay(link.server, question, ask)
        if (relayed._tag === "Refused") return yield* fail(relayed.message)
        answers[key] = relayed.answer
      }
      if (Object.keys(answers).length === 0) yield* Effect.sleep(STATE_ONLY_PAUSE_MS)
      raw = yield* send({
        ...params,
        ...(Object.keys(answers).length === 0 ? {} : { inputResponses: answers }),
        // Sent back exactly as it came, and only when it came.
        ...(typeof raw.requestState === "string" ? { requestState: raw.requestState } : {})
      })
    }
    return raw
  })

/** What came of a login offered to the person: a new login, or the refusal stands (and why, when they were asked). */
type Offer = (needed: LoginNeeded) => Effect.Effect<"logged-in" | { readonly why?: string }>

/** A refusal whose offered login did not happen: said with why. */
class LoginRefused {
  readonly failure: ToolFailure
  constructor(refusal: ToolFailure, why: string) {
    this.failure = fail(`${refusal.message} (${why}.)`, refusal.metadata)
  }
}

const NOBODY: Asker = () => Effect.succeed({ _tag: "Unavailable", reason: "this host has no way to ask the person" })

export const makeCaller =
  (link: McpLink, host?: HostAsker, canVisit?: CanVisit): McpCaller =>
  (tool, args, ctx?: ToolContext, declared?: ReadonlyArray<ParamHeader>) =>
    Effect.gen(function* () {
      const sessionId = ctx?.sessionId
      const ask: Asker = host === undefined ? NOBODY : (question) => host(question, sessionId)
      const door = link.login
      // A login is begun (a listener, maybe a registration) only where a URL can reach a person.
      const offer: Offer | undefined =
        door === undefined || host === undefined
          ? undefined
          : (needed) =>
              Effect.flatMap(canVisit === undefined ? Effect.succeed(true) : canVisit(sessionId), (can) =>
                can
                  ? Effect.map(offerLogin(door, tool, needed, ask), (why) =>
                      why === undefined ? ("logged-in" as const) : { why }
                    )
                  : Effect.succeed({})
              )
      // A 2025-era server's question arrives outside the call's fiber: it is asked in the
      // call's context (its held round, when a 2026 client of ours made the call).
      const context = yield* Effect.context<never>()
      const round = yield* InputRound
      const waiting: Waiting = {
        key: round ?? sessionId,
        ask: (question, signal) => Effect.runPromiseWith(context)(relay(link.server, question, ask), { signal })
      }
      const raw = yield* Effect.acquireUseRelease(
        Effect.sync(() => link.desk.enter(waiting)),
        () =>
          callRounds(
            link,
            tool,
            { name: tool, arguments: args as Record<string, unknown> },
            ask,
            // A 2026-07-28 server over HTTP checks these against the arguments (param-headers.ts).
            declared === undefined || link.era !== "2026-07-28" ? undefined : paramHeaders(declared, args),
            offer
          ),
        () => Effect.sync(() => link.desk.leave(waiting))
      ).pipe(
        // A question this call's person could not answer is the reason, whatever the server made of the refusal.
        Effect.mapError((e) => (waiting.refused === undefined ? e : fail(waiting.refused))),
        Effect.flatMap((r) => (waiting.refused === undefined ? Effect.succeed(r) : Effect.fail(fail(waiting.refused))))
      )
      return yield* outputOf(link, tool, raw)
    })
