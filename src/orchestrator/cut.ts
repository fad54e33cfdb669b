/**
 * The cut: the model's and the UI's copies of an in-memory output that is already in the
 * store, by the head+tail rule alone (the shape stage, shape.ts, decides when it applies).
 * The marker (output/omitted-marker.ts) names the omitted line range and the exact `output`
 * call that retrieves it.
 */
import { omittedMarker } from "../output/omitted-marker.ts"
import type { PutResult } from "../output/store.ts"
import { adaptiveTruncate, tailCap } from "../output/truncate.ts"
import type { TruncateDirection } from "../tool/tool.ts"

export interface CutInput {
  readonly text: string
  readonly callId: string
  readonly stored: PutResult
  readonly maxChars: number
  readonly maxLines: number
  readonly uiMaxChars: number
  readonly direction: TruncateDirection
  /** `countLines(text)`, when the caller has it already. */
  readonly lines?: number
}

export interface Shaped {
  readonly modelOutput: string
  readonly uiOutput: string
  readonly truncated: boolean
}

export const cut = (input: CutInput): Shaped => {
  const kept = adaptiveTruncate(input.text, {
    maxChars: input.maxChars,
    maxLines: input.maxLines,
    direction: input.direction,
    marker: omittedMarker(input.callId, input.stored),
    ...(input.lines === undefined ? {} : { lines: input.lines })
  })
  return { modelOutput: kept.text, uiOutput: tailCap(input.text, input.uiMaxChars), truncated: kept.truncated }
}
