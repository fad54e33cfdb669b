/**
 * record: the whole output goes into the OutputStore BEFORE anything lossy happens to it. A
 * streamed output (and a timeout's or a cancel's partial output) is what the tool emitted and
 * may have spilled to the store's file; it is committed, never read whole.
 */
import { Effect, Result } from "effect"
import type { OutputView } from "../output/spill.ts"
import type { OutputStore, PutResult } from "../output/store.ts"
import { countLines } from "../output/truncate.ts"
import type { Outcome } from "./attempt.ts"
import type { LiveOutput } from "./live.ts"

export type { Outcome } from "./attempt.ts"

/** The output as stored, and how the rest of the path may read it. */
export interface Recorded {
  readonly stored: PutResult
  readonly view: OutputView
  readonly lines: number
}

export interface RecordInput {
  readonly sessionId: string
  readonly callId: string
  readonly tool: string
  readonly live: LiveOutput
}

const NOT_STORED_EMPTY: PutResult = { stored: false, reason: "empty" }

export const record = (store: OutputStore["Service"], rec: RecordInput, outcome: Outcome): Effect.Effect<Recorded> => {
  const error = Result.isFailure(outcome) ? outcome.failure : undefined
  const partial = error !== undefined && "partialOutput" in error ? error.partialOutput : ""
  const { live } = rec
  const fromLive = Result.isSuccess(outcome)
    ? outcome.success.streamed === true
    : error !== undefined && "partialOutput" in error && (partial !== "" || live.size() > 0)
  if (fromLive && live.spilled()) {
    return Effect.map(live.commit(), ({ result, view }) => ({
      stored: result,
      view,
      lines: view.kind === "text" ? countLines(view.text) : view.lines
    }))
  }
  const full = fromLive ? live.text() : Result.isSuccess(outcome) ? outcome.success.output : partial
  const lines = countLines(full)
  const put: Effect.Effect<PutResult> =
    full.length === 0
      ? Effect.succeed(NOT_STORED_EMPTY)
      : store.put({ sessionId: rec.sessionId, id: rec.callId, tool: rec.tool, text: full, lines })
  return Effect.map(live.active() ? Effect.andThen(live.discard(), put) : put, (stored) => ({
    stored,
    view: { kind: "text", text: full },
    lines
  }))
}
