/**
 * The line that stands where a cut removed lines from the model's copy: which lines, how many
 * chars, and the exact `output` call that retrieves or searches them (or, when the store did
 * not keep the output, why not and what to do instead).
 */
import type { PutResult } from "./store.ts"
import type { OmittedRange } from "./truncate.ts"

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
