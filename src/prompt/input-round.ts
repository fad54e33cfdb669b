/**
 * The in-band way to ask a person (MCP 2026-07-28): a call from a client of that revision
 * cannot receive an elicitation request in the middle of it. Its server runs the call with an
 * `InputRound`; the MCP asker (mcp-elicitation.ts) hands it the elicitation form instead, and
 * the round holds the call there while the client asks the person and retries with the answer
 * (src/mcp/held-calls.ts). Code the call runs (a program's nested calls) sees the same round.
 */
import { Context, type Effect } from "effect"

/** An elicitation form, as MCP sends it. */
export interface ElicitationForm {
  readonly mode: "form"
  readonly message: string
  readonly requestedSchema: { readonly type: "object"; readonly properties: Record<string, unknown> }
}

/**
 * A URL the person is asked to visit (an upstream server's login, a payment page): URL-mode
 * elicitation. `elicitationId` is the 2025 era's; a 2026-era question carries none.
 */
export interface UrlRequest {
  readonly mode: "url"
  readonly message: string
  readonly url: string
  readonly elicitationId: string
}

/** What the person did with the form. */
export interface ElicitationAnswer {
  readonly action: "accept" | "decline" | "cancel"
  readonly content?: Record<string, unknown>
}

export interface InputRoundShape {
  /** Asks through the client; `Unavailable` with the reason when nobody can be asked. */
  readonly elicit: (
    form: ElicitationForm | UrlRequest
  ) => Effect.Effect<
    | { readonly _tag: "Answer"; readonly answer: ElicitationAnswer }
    | { readonly _tag: "Unavailable"; readonly reason: string }
  >
  /**
   * Told when the call (or a call it makes) starts running its tool: a question asked before
   * that was asked while nothing but the permission checks had run, so another server may run
   * the call again from the start with the answer; a question asked after must be answered
   * where the call is suspended (src/mcp/held-calls.ts).
   */
  readonly started?: Effect.Effect<void>
  /** Whether the client can be asked a URL question (it declared URL-mode elicitation). */
  readonly canVisit?: boolean
}

/** Set around a call from a 2026-era MCP client; unset everywhere else. */
export const InputRound = Context.Reference<InputRoundShape | undefined>("freecode/InputRound", {
  defaultValue: () => undefined
})
