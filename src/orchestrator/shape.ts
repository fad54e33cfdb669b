/**
 * Builds the model's and the UI's copies of an output that is already in the store.
 * The marker names the omitted line range and the exact `output` call that retrieves it.
 */
import type { PutResult } from "../output/store.ts"
import { adaptiveTruncate, type OmittedRange, tailCap } from "../output/truncate.ts"
import type { TruncateDirection } from "../tool/tool.ts"

export interface ShapeInput {
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

const n = (x: number) => x.toLocaleString("en-US")

export const omittedMarker =
  (callId: string, stored: PutResult) =>
  ({ fromLine, toLine, totalLines, omittedChars }: OmittedRange): string => {
    const what = `[… lines ${n(fromLine)}–${n(toLine)} of ${n(totalLines)} omitted (${n(omittedChars)} chars).`
    if (!stored.stored)
      return `${what} The full output was not kept (${stored.reason}); re-run with a narrower command to see them …]`
    const limit = Math.min(toLine - fromLine + 1, 200)
    const id = JSON.stringify(callId)
    return `${what} Retrieve them with output {"id": ${id}, "offset": ${fromLine}, "limit": ${limit}}, or search them with output {"id": ${id}, "pattern": "<regex>"} …]`
  }

export const shape = (input: ShapeInput): Shaped => {
  const cut = adaptiveTruncate(input.text, {
    maxChars: input.maxChars,
    maxLines: input.maxLines,
    direction: input.direction,
    marker: omittedMarker(input.callId, input.stored),
    ...(input.lines === undefined ? {} : { lines: input.lines })
  })
  return { modelOutput: cut.text, uiOutput: tailCap(input.text, input.uiMaxChars), truncated: cut.truncated }
}
