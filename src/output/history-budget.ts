/**
 * The history-wide budget: a loop calls `apply` before each request with the conversation's
 * tool results, oldest first, and puts back what it returns. Past the budget, the OLDEST
 * results are replaced by a short marker naming the `output` call that retrieves them.
 *
 * Prompt caches key off the request's prefix, so this is built to change it as rarely as
 * possible: it is a pure function of its input (same results in, same results out, and a
 * result pruned once stays the same marker), and when it prunes it goes down to 75% of the
 * budget, so the next many requests fit without touching the prefix again. The newest results
 * are never pruned: the model is working with them.
 *
 * A pruned `read` result is reported to ReadState (markReadPruned), so the next identical read
 * is answered in full instead of with a pointer to a copy that is no longer there.
 */
import { Context, Effect, Layer } from "effect"
import { ReadState } from "../read-state/read-state.ts"
import { positiveIntOr } from "../setting/positive-int.ts"

export interface HistoryResult {
  /** The tool call id (also the key of the full output in the OutputStore). */
  readonly id: string
  readonly tool: string
  /** What the conversation holds for this result now (a modelOutput, or an earlier marker). */
  readonly content: string
}

export interface BudgetedHistory {
  /** The results in the same order; pruned ones carry their marker as content. */
  readonly results: ReadonlyArray<HistoryResult>
  /** Ids pruned by this call (not those pruned earlier). */
  readonly pruned: ReadonlyArray<string>
  /** Characters of tool results after pruning. */
  readonly totalChars: number
}

export interface HistoryBudgetSettings {
  /** Characters of tool results the whole conversation may hold. */
  readonly maxChars: number
  /** The newest results, never pruned. */
  readonly keepRecent: number
}

export const HISTORY_MAX_CHARS_NAME = "FREECODE_HISTORY_MAX_CHARS"
export const defaultHistorySettings: HistoryBudgetSettings = { maxChars: 200_000, keepRecent: 3 }
/** When pruning, go down to this share of the budget, so pruning (a prefix change) is rare. */
export const LOW_WATER = 0.75

/** The marker a pruned result becomes: the same for the same result, every time. */
export const prunedMarker = (result: HistoryResult, chars: number): string =>
  `[${result.tool} result pruned from the conversation to save context (${chars.toLocaleString("en-US")} chars). Retrieve it with output {"id": ${JSON.stringify(result.id)}} if you still need it.]`

const PRUNED =
  /^\[\S+ result pruned from the conversation to save context \([\d,]+ chars\)\. Retrieve it with output \{"id": /

/** The pure part: which results to prune, and what the history becomes. */
export const budgetHistory = (
  results: ReadonlyArray<HistoryResult>,
  settings: HistoryBudgetSettings
): BudgetedHistory => {
  let total = results.reduce((n, r) => n + r.content.length, 0)
  if (total <= settings.maxChars) return { results, pruned: [], totalChars: total }
  const target = Math.floor(settings.maxChars * LOW_WATER)
  const out = [...results]
  const pruned: Array<string> = []
  const prunable = Math.max(0, results.length - settings.keepRecent)
  for (let i = 0; i < prunable && total > target; i++) {
    const r = results[i]!
    if (PRUNED.test(r.content)) continue
    const marker = prunedMarker(r, r.content.length)
    if (marker.length >= r.content.length) continue
    out[i] = { ...r, content: marker }
    total -= r.content.length - marker.length
    pruned.push(r.id)
  }
  return { results: out, pruned, totalChars: total }
}

export class HistoryBudget extends Context.Service<
  HistoryBudget,
  {
    readonly settings: HistoryBudgetSettings
    /** Call before each request with the conversation's tool results, oldest first. */
    readonly apply: (sessionId: string, results: ReadonlyArray<HistoryResult>) => Effect.Effect<BudgetedHistory>
  }
>()("freecode/HistoryBudget") {
  static readonly make = (settings: HistoryBudgetSettings) =>
    Effect.gen(function* () {
      const readState = yield* ReadState
      return HistoryBudget.of({
        settings,
        apply: (sessionId, results) =>
          Effect.gen(function* () {
            const budgeted = budgetHistory(results, settings)
            // ReadState knows which calls recorded a read; any other id is ignored there, so no
            // tool's name needs checking here.
            for (const id of budgeted.pruned) yield* readState.markReadPruned(sessionId, id)
            return budgeted
          })
      })
    })

  /** Reads FREECODE_HISTORY_MAX_CHARS (default 200,000) when built. */
  static readonly layer = Layer.effect(
    HistoryBudget,
    Effect.gen(function* () {
      const maxChars = yield* positiveIntOr(HISTORY_MAX_CHARS_NAME, defaultHistorySettings.maxChars)
      return yield* HistoryBudget.make({ ...defaultHistorySettings, maxChars })
    })
  )

  /** Fixed settings, for tests and embedders. */
  static readonly layerWith = (settings: Partial<HistoryBudgetSettings>) =>
    Layer.effect(HistoryBudget, HistoryBudget.make({ ...defaultHistorySettings, ...settings }))
}
