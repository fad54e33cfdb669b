import { describe, expect, it } from "@effect/vitest"
import { declaredConcurrencySafe, planToolBatches } from "../../src/orchestrator/batching.ts"
import { BashTool } from "../../src/tools/bash.ts"
import { GrepTool } from "../../src/tools/grep.ts"
import type { BuiltinRequirements } from "../../src/tools/index.ts"
import { ReadTool } from "../../src/tools/read.ts"
import { WriteTool } from "../../src/tools/write.ts"

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

  it("reads the real tools' declarations: [read, read, write, read] is three batches; an unknown tool runs alone", () => {
    const safe = declaredConcurrencySafe<BuiltinRequirements>([ReadTool, GrepTool, WriteTool, BashTool])
    const batches = planToolBatches(
      ["read", "Read", "write", "read", "bash", "grep", "nope", "grep"].map((name, i) => call(name, `c${i}`)),
      safe
    ).map((b) => ({ concurrent: b.concurrent, ids: b.calls.map((c) => c.id) }))
    expect(batches).toEqual([
      { concurrent: true, ids: ["c0", "c1"] },
      { concurrent: false, ids: ["c2"] },
      { concurrent: false, ids: ["c3"] },
      { concurrent: false, ids: ["c4"] },
      { concurrent: false, ids: ["c5"] },
      { concurrent: false, ids: ["c6"] },
      { concurrent: false, ids: ["c7"] }
    ])
  })
})
