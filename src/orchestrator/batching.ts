/**
 * Groups a turn's calls: runs of concurrency-safe calls share a batch and run together;
 * anything else, an unknown tool included, runs alone. Ordering around writes, edits and
 * shell commands is kept, and a batch of one is sequential.
 */
import type { ToolCall } from "../tool/result.ts"

export interface ToolBatch {
  readonly concurrent: boolean
  readonly calls: ReadonlyArray<ToolCall>
}

export const planToolBatches = (
  calls: ReadonlyArray<ToolCall>,
  isConcurrencySafe: (call: ToolCall) => boolean
): Array<ToolBatch> => {
  const batches: Array<{ concurrent: boolean; calls: Array<ToolCall> }> = []
  for (const call of calls) {
    const safe = isConcurrencySafe(call)
    const last = batches[batches.length - 1]
    if (safe && last?.concurrent) last.calls.push(call)
    else batches.push({ concurrent: safe, calls: [call] })
  }
  return batches.map((b) => ({ concurrent: b.concurrent && b.calls.length > 1, calls: b.calls }))
}
