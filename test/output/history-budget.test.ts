import { NodeServices } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Effect, FileSystem } from "effect"
import { testToolSystem } from "../../layers/test.ts"
import { Orchestrator } from "../../src/orchestrator/orchestrator.ts"
import {
  budgetHistory,
  HistoryBudget,
  type HistoryResult,
  LOW_WATER,
  prunedMarker
} from "../../src/output/history-budget.ts"
import { DEDUP_POINTER } from "../../src/read-state/read-state.ts"
import { OutputTool } from "../../src/tools/output.ts"
import { ReadTool } from "../../src/tools/read.ts"

const result = (i: number, chars: number, tool = "bash"): HistoryResult => ({
  id: `call_${i}`,
  tool,
  content: `${i}:`.padEnd(chars, "x")
})

describe("HistoryBudget", () => {
  it("leaves a history under the budget untouched", () => {
    const results = [result(1, 1000), result(2, 1000)]
    const out = budgetHistory(results, { maxChars: 5000, keepRecent: 1 })
    expect(out).toEqual({ results, pruned: [], totalChars: 2000 })
  })

  it("replaces the oldest results with markers naming the output call, down to 75% of the budget", () => {
    const results = Array.from({ length: 10 }, (_, i) => result(i + 1, 30_000))
    const out = budgetHistory(results, { maxChars: 200_000, keepRecent: 3 })
    // 300,000 chars; pruning stops once the total is under 150,000.
    expect(out.pruned).toEqual(["call_1", "call_2", "call_3", "call_4", "call_5", "call_6"])
    expect(out.totalChars).toBeLessThanOrEqual(200_000 * LOW_WATER)
    expect(out.results[0]!.content).toBe(prunedMarker(results[0]!, 30_000))
    expect(out.results[0]!.content).toContain('Retrieve it with output {"id": "call_1"}')
    expect(out.results.slice(6)).toEqual(results.slice(6))
  })

  it("never touches the newest results, even when they alone exceed the budget", () => {
    const results = [result(1, 500), result(2, 90_000), result(3, 90_000)]
    const out = budgetHistory(results, { maxChars: 100_000, keepRecent: 2 })
    expect(out.pruned).toEqual(["call_1"])
    expect(out.results.slice(1)).toEqual(results.slice(1))
  })

  it("is deterministic and prefix-stable: the same input gives the same output, and pruned stays pruned", () => {
    const results = Array.from({ length: 12 }, (_, i) => result(i + 1, 25_000))
    const first = budgetHistory(results, { maxChars: 200_000, keepRecent: 3 })
    expect(budgetHistory(results, { maxChars: 200_000, keepRecent: 3 })).toEqual(first)
    // The next request: the history as the loop now holds it, plus two new results.
    const next = [...first.results, result(13, 10_000), result(14, 10_000)]
    const second = budgetHistory(next, { maxChars: 200_000, keepRecent: 3 })
    expect(second.pruned).toEqual([])
    expect(second.results).toEqual(next) // byte-identical prefix: the cache survives
    // Keep adding until the budget is crossed again: only results not yet pruned change.
    const later = [...second.results, ...Array.from({ length: 6 }, (_, i) => result(20 + i, 20_000))]
    const third = budgetHistory(later, { maxChars: 200_000, keepRecent: 3 })
    expect(third.pruned.length).toBeGreaterThan(0)
    third.results.forEach((r, i) => {
      if (!third.pruned.includes(r.id)) expect(r).toEqual(later[i])
    })
    for (const id of first.pruned) expect(third.pruned).not.toContain(id)
  })

  it.live(
    "a pruned read is re-sent in full on the next identical read",
    () =>
      Effect.gen(function* () {
        const fs = yield* FileSystem.FileSystem
        const root = yield* fs.realPath(yield* fs.makeTempDirectoryScoped({ prefix: "freecode-history-" }))
        const text = Array.from({ length: 40 }, (_, i) => `line ${i + 1} of a file worth reading twice`).join("\n")
        yield* fs.writeFileString(`${root}/notes.txt`, `${text}\n`)
        yield* Effect.gen(function* () {
          const orchestrator = yield* Orchestrator
          const read = (id: string) =>
            orchestrator.execute({ id, name: "read", args: { filePath: "notes.txt" } }, { sessionId: "s" })
          const r1 = yield* read("r1")
          expect(r1.modelOutput).toContain("line 40 of a file")
          const r2 = yield* read("r2")
          expect(r2.modelOutput).toContain(DEDUP_POINTER)

          const budget = yield* HistoryBudget.make({ maxChars: 1_000, keepRecent: 1 })
          const history: Array<HistoryResult> = [r1, r2].map((r) => ({
            id: r.id,
            tool: r.tool,
            content: r.modelOutput
          }))
          history.push({ id: "b1", tool: "bash", content: "ok\n" })
          const budgeted = yield* budget.apply("s", history)
          expect(budgeted.pruned).toEqual(["r1"])

          const r3 = yield* read("r3")
          expect(r3.modelOutput).not.toContain(DEDUP_POINTER)
          expect(r3.modelOutput).toContain("line 40 of a file")
          // And the pruned copy is still retrievable through the marker's output call.
          const back = yield* orchestrator.execute({ id: "o", name: "output", args: { id: "r1" } }, { sessionId: "s" })
          expect(back.status).toBe("ok")
          expect(back.modelOutput).toContain("line 40 of a file")
        }).pipe(Effect.provide(testToolSystem({ root, tools: [ReadTool, OutputTool] }), { local: true }))
      }).pipe(Effect.provide(NodeServices.layer)),
    30_000
  )
})
