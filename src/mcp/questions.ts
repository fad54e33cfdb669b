/**
 * An MCP server we connect to asking the person something in the middle of a tool call: an
 * elicitation form or a URL to visit. In the 2025 era it sends `elicitation/create` while the
 * call is open; in the 2026-07-28 era the call answers `input_required` with the question and a
 * `requestState`, and is sent again with the answer and the state, unchanged (call.ts). Either
 * way the question goes to the person through the host's asker — the terminal, the elicitation
 * of our own MCP client (2025), or an `input_required` round of our own (2026), which holds our
 * call where it is until our client answers, so nothing runs twice — and the answer is held to
 * the form (src/prompt/form.ts). A decline or a cancel goes back as it is. When nobody can be
 * asked the server is refused, and so is the call, saying what was asked and why nobody answered.
 */
import { randomUUID } from "node:crypto"
import type { Client } from "@modelcontextprotocol/client"
import { Effect } from "effect"
import { type FormOutcome, type FormRequest, heldToForm } from "../prompt/form.ts"
import type { ElicitationAnswer } from "../prompt/input-round.ts"

/** What our client declares: forms (it fills in their defaults, SEP-1034) and URLs. */
export const CLIENT_CAPABILITIES = { elicitation: { form: { applyDefaults: true }, url: {} } }

/** Asks the person of one call: the host's asker, in the call's context. */
export type Asker = (request: FormRequest) => Effect.Effect<FormOutcome>

/** The host's asker (a Prompter's `elicit`), given the call's session. */
export type HostAsker = (request: FormRequest, sessionId: string | undefined) => Effect.Effect<FormOutcome>

/** Whether a URL question can reach the call's person (asked before a login is set up for one). */
export type CanVisit = (sessionId: string | undefined) => Effect.Effect<boolean>

/** Who answers a server's questions: the host's asker, and whether it can show a URL now. */
export interface Person {
  readonly host?: HostAsker
  readonly canVisit?: CanVisit
}

export type Relayed =
  | { readonly _tag: "Answer"; readonly answer: ElicitationAnswer }
  | { readonly _tag: "Refused"; readonly message: string }

const isRecord = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)

/** An elicitation request's params as a question, or what is wrong with them. */
export const questionOf = (params: unknown): FormRequest | string => {
  if (!isRecord(params) || typeof params.message !== "string") return "it has no message"
  const { message } = params
  if (params.mode === "url") {
    if (typeof params.url !== "string" || !URL.canParse(params.url)) return "its url is not a URL"
    const protocol = new URL(params.url).protocol
    if (protocol !== "https:" && protocol !== "http:") return `its url is not a web address (${protocol})`
    // A 2026-era URL question carries no id (its state does); a 2025 client of ours needs one.
    const elicitationId = typeof params.elicitationId === "string" ? params.elicitationId : randomUUID()
    return { mode: "url", message, url: params.url, elicitationId }
  }
  if (params.mode !== undefined && params.mode !== "form") return `its mode ${String(params.mode)} is unknown`
  const schema = params.requestedSchema
  if (!isRecord(schema) || !isRecord(schema.properties)) return "its requestedSchema has no properties"
  return {
    mode: "form",
    message,
    requestedSchema: {
      type: "object",
      properties: schema.properties,
      ...(Array.isArray(schema.required) ? { required: schema.required } : {})
    }
  }
}

const quoted = (text: string) => JSON.stringify(text.length > 300 ? `${text.slice(0, 297)}...` : text)

/** The refusal the model reads when a server's question found nobody to answer it. */
export const refusal = (server: string, question: string, reason: string) =>
  `The ${server} MCP server asked the person ${quoted(question)} in the middle of the call, and nobody could answer it here (${reason}); the server was refused, so the call did not finish. Do the task another way, or ask the person to run it where they can answer.`

/** Asks, and holds the answer to the question's form. */
export const relay = (server: string, question: FormRequest, ask: Asker): Effect.Effect<Relayed> =>
  Effect.map(ask(question), (outcome): Relayed => {
    const held = outcome._tag === "Answer" ? heldToForm(question, outcome.answer) : outcome
    return held._tag === "Answer" ? held : { _tag: "Refused", message: refusal(server, question.message, held.reason) }
  })

/** One call on a connection, while it may be asked something. */
export interface Waiting {
  /** Whose person answers: calls with the same key may take each other's questions. */
  readonly key: unknown
  readonly ask: (question: FormRequest, signal: AbortSignal) => Promise<Relayed>
  /** Set when a question of this call was refused: the call fails with it. */
  refused?: string
}

/**
 * The calls waiting on one connection, where a 2025-era server's `elicitation/create` is sent.
 * The request does not say which call asked: it goes to the call in flight, or to the calls in
 * flight when they share one person (one session, no held round); with calls of several people
 * in flight it cannot be told whose question it is, and it is refused rather than shown to the
 * wrong person.
 */
export class Desk {
  private readonly calls = new Set<Waiting>()

  enter(waiting: Waiting): void {
    this.calls.add(waiting)
  }

  leave(waiting: Waiting): void {
    this.calls.delete(waiting)
  }

  /** Answers an `elicitation/create`; throws (the server gets an error) when it is refused. */
  async answer(params: unknown, signal: AbortSignal): Promise<ElicitationAnswer> {
    const calls = [...this.calls]
    const keys = new Set(calls.map((c) => c.key))
    const question = questionOf(params)
    if (typeof question === "string") throw new Error(`The elicitation request is malformed: ${question}.`)
    if (calls.length === 0 || keys.size > 1) {
      const reason =
        calls.length === 0
          ? "no call of ours is waiting on this server"
          : "calls from several people are waiting on this server, and the request does not say whose it is"
      throw new Error(`Nobody can answer: ${reason}.`)
    }
    const [call] = calls
    const relayed = await call!.ask(question, signal)
    if (relayed._tag === "Refused") {
      call!.refused ??= relayed.message
      throw new Error("Nobody could answer the question here; the call is refused.")
    }
    return relayed.answer
  }
}

/** Sends a 2025-era server's `elicitation/create` on `client` to the calls waiting at `desk`. */
export const listenForQuestions = (client: Client, desk: Desk): void =>
  client.setRequestHandler(
    "elicitation/create",
    // The answer was held to the form, which is what the SDK's type says.
    (request, ctx) => desk.answer(request.params, ctx.mcpReq.signal) as Promise<never>
  )
