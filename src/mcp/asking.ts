/**
 * One request that may ask the person on the way — `tools/call`, `resources/read`, `prompts/get`:
 * a question the server asks goes to the person of the request (questions.ts). In the 2025 era
 * it comes while the request is open (the request waits on the connection's desk); in the 2026
 * era the answer is `input_required`: each question is asked in turn, then the request is sent
 * again with the answers and the server's `requestState` as it came. A refusal for want of a
 * login is offered to the person once (call-login.ts), then the request is sent again.
 */
import { Effect } from "effect"
import { InputRound } from "../prompt/input-round.ts"
import { fail, type ToolFailure } from "../tool/errors.ts"
import { type LoginNeeded, loginNeededIn } from "./auth/login-needed.ts"
import { offerLogin } from "./call-login.ts"
import { type McpLink, rawRequest, requestFailure } from "./link.ts"
import { type Asker, type Person, questionOf, relay, type Waiting } from "./questions.ts"

/** A server asking more rounds than this in one request is stopped (as the SDK's own driver does). */
const MAX_ROUNDS = 10
/** A round with only a state and no question is sent again after this pause, not at once. */
const STATE_ONLY_PAUSE_MS = 100

const isRecord = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)

/** What came of a login offered to the person: a new login, or the refusal stands (and why, when they were asked). */
type Offer = (needed: LoginNeeded) => Effect.Effect<"logged-in" | { readonly why?: string }>

/** A refusal whose offered login did not happen: said with why. */
class LoginRefused {
  readonly failure: ToolFailure
  constructor(refusal: ToolFailure, why: string) {
    this.failure = fail(`${refusal.message} (${why}.)`, refusal.metadata)
  }
}

/**
 * The request, its `input_required` rounds answered (2026 era): each question in a round asked
 * in turn, then the request sent again with the answers and the state; a question nobody can
 * answer ends it with the refusal, and the server's state is dropped unsent.
 */
const rounds = (
  link: McpLink,
  method: string,
  what: string,
  params: Record<string, unknown>,
  ask: Asker,
  headers: Readonly<Record<string, string>> | undefined,
  offer: Offer | undefined
): Effect.Effect<unknown, ToolFailure> =>
  Effect.gen(function* () {
    const modern = link.era === "2026-07-28"
    let offered = false
    const once = (p: Record<string, unknown>) => rawRequest(link, method, p, link.timeoutMs, modern, headers)
    // Refused for want of a login: offered to the person once per request, then sent again (it never ran).
    const send = (p: Record<string, unknown>) =>
      once(p).pipe(
        Effect.catch((e) => {
          const needed = loginNeededIn(e)
          if (offered || offer === undefined || needed?.kind !== "login") return Effect.fail(e)
          offered = true
          return Effect.flatMap(offer(needed), (came) =>
            came === "logged-in"
              ? once(p)
              : Effect.fail(came.why === undefined ? e : new LoginRefused(requestFailure(link, what, e), came.why))
          )
        }),
        Effect.mapError((e) => (e instanceof LoginRefused ? e.failure : requestFailure(link, what, e)))
      )
    let raw = yield* send(params)
    for (let round = 1; isRecord(raw) && raw.resultType === "input_required"; round++) {
      if (round > MAX_ROUNDS)
        return yield* fail(
          `The ${link.server} MCP server asked for input ${MAX_ROUNDS} times during ${what} without finishing; it was stopped and its effect is unknown.`
        )
      const requests = isRecord(raw.inputRequests) ? raw.inputRequests : {}
      const answers: Record<string, unknown> = {}
      for (const [key, entry] of Object.entries(requests)) {
        const asked = isRecord(entry) ? entry.method : undefined
        if (asked !== "elicitation/create")
          return yield* fail(
            `The ${link.server} MCP server asked this client for ${String(asked)} during ${what}, which it does not offer (only questions for the person); ${what} did not finish.`
          )
        const question = questionOf((entry as Record<string, unknown>).params)
        if (typeof question === "string")
          return yield* fail(
            `The ${link.server} MCP server asked the person something during ${what}, but the question is malformed (${question}); ${what} did not finish.`
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

const NOBODY: Asker = () => Effect.succeed({ _tag: "Unavailable", reason: "this host has no way to ask the person" })

/**
 * Sends `method` on the link, the person of `sessionId` answering what the server asks on the
 * way; the raw answer, or the failure as the model reads it (`what` names the request there).
 */
export const askingRequest = (
  link: McpLink,
  person: Person | undefined,
  method: string,
  params: Record<string, unknown>,
  what: string,
  sessionId: string | undefined,
  headers?: Readonly<Record<string, string>>
): Effect.Effect<unknown, ToolFailure> =>
  Effect.gen(function* () {
    const host = person?.host
    const ask: Asker = host === undefined ? NOBODY : (question) => host(question, sessionId)
    const door = link.login
    const canVisit = person?.canVisit
    // A login is begun (a listener, maybe a registration) only where a URL can reach a person.
    const offer: Offer | undefined =
      door === undefined || host === undefined
        ? undefined
        : (needed) =>
            Effect.flatMap(canVisit === undefined ? Effect.succeed(true) : canVisit(sessionId), (can) =>
              can
                ? Effect.map(offerLogin(door, what, needed, ask), (why) =>
                    why === undefined ? ("logged-in" as const) : { why }
                  )
                : Effect.succeed({})
            )
    // A 2025-era server's question arrives outside the request's fiber: it is asked in the
    // request's context (its held round, when a 2026 client of ours made the call).
    const context = yield* Effect.context<never>()
    const round = yield* InputRound
    const waiting: Waiting = {
      key: round ?? sessionId,
      ask: (question, signal) => Effect.runPromiseWith(context)(relay(link.server, question, ask), { signal })
    }
    return yield* Effect.acquireUseRelease(
      Effect.sync(() => link.desk.enter(waiting)),
      () => rounds(link, method, what, params, ask, headers, offer),
      () => Effect.sync(() => link.desk.leave(waiting))
    ).pipe(
      // A question this request's person could not answer is the reason, whatever the server made of the refusal.
      Effect.mapError((e) => (waiting.refused === undefined ? e : fail(waiting.refused))),
      Effect.flatMap((r) => (waiting.refused === undefined ? Effect.succeed(r) : Effect.fail(fail(waiting.refused))))
    )
  })
