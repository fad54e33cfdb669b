/**
 * Groups a turn's calls: runs of concurrency-safe calls share a batch and run together;
 * anything else, an unknown tool included, runs alone. Ordering around writes, edits and
 * shell commands is kept, and a batch of one is sequential.
 */
import { Effect } from "effect"
import type { ToolCall, ToolResult } from "../tool/result.ts"
import type { Tool } from "../tool/tool.ts"

/** Concurrency-safe calls in one batch run at most this many at a time. */
export const BATCH_CONCURRENCY = 10

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

/** Safe when the registered tool declares it (names compared case-insensitively); unknown tools are not. */
export const declaredConcurrencySafe = <R>(tools: ReadonlyArray<Tool<R>>): ((call: ToolCall) => boolean) => {
  const safe = new Map(tools.map((t) => [t.id.toLowerCase(), t.concurrencySafe]))
  return (call) => safe.get(call.name.toLowerCase()) ?? false
}

/** Runs one turn's calls in planned batches with `run`; results come back in call order. */
export const runInBatches = <E, R>(
  calls: ReadonlyArray<ToolCall>,
  isConcurrencySafe: (call: ToolCall) => boolean,
  run: (call: ToolCall) => Effect.Effect<ToolResult, E, R>
): Effect.Effect<Array<ToolResult>, E, R> =>
  Effect.gen(function* () {
    const results: Array<ToolResult> = []
    for (const batch of planToolBatches(calls, isConcurrencySafe)) {
      results.push(
        ...(yield* Effect.forEach(batch.calls, run, { concurrency: batch.concurrent ? BATCH_CONCURRENCY : 1 }))
      )
    }
    return results
  })
