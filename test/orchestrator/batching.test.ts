import { describe, expect, it } from "@effect/vitest"
import { planToolBatches } from "../../src/orchestrator/batching.ts"

const call = (name: string, id = name) => ({ id, name, args: {} })
const safe = new Set(["read", "grep", "glob"])
const plan = (names: ReadonlyArray<string>) =>
  planToolBatches(
    names.map((n, i) => call(n, `${n}${i}`)),
    (c) => safe.has(c.name)
  ).map((b) => ({ concurrent: b.concurrent, ids: b.calls.map((c) => c.id) }))

describe("planToolBatches", () => {
  it("[read, read, write, read] is three batches, in order", () => {
    expect(plan(["read", "read", "write", "read"])).toEqual([
      { concurrent: true, ids: ["read0", "read1"] },
      { concurrent: false, ids: ["write2"] },
      { concurrent: false, ids: ["read3"] }
    ])
  })

  it("gives unknown tools and every unsafe call a batch of its own", () => {
    expect(plan(["bash", "nope", "grep", "glob", "read"])).toEqual([
      { concurrent: false, ids: ["bash0"] },
      { concurrent: false, ids: ["nope1"] },
      { concurrent: true, ids: ["grep2", "glob3", "read4"] }
    ])
  })

  it("plans nothing for no calls", () => {
    expect(plan([])).toEqual([])
  })
})
