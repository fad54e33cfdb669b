/** prepare on its own: resolution, parsing, the depth bound, coercion, decoding and forwarding. */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Result, Schema } from "effect"
import fc from "fast-check"
import { type Catalog, MAX_ARGUMENT_DEPTH, prepare } from "../../src/orchestrator/prepare.ts"
import { callTool } from "../../src/surface/bridge.ts"
import { defineTool, type Tool } from "../../src/tool/tool.ts"

const ASKER = { sessionId: "s", root: "/" }

const Count = defineTool({
  id: "count",
  description: "Counts.",
  parameters: Schema.Struct({ n: Schema.Int, note: Schema.optionalKey(Schema.String) }),
  execute: ({ n }) => Effect.succeed({ title: "count", output: String(n) })
})

const Tree = defineTool({
  id: "tree",
  description: "Takes anything.",
  parameters: Schema.Struct({ root: Schema.Unknown }),
  execute: () => Effect.succeed({ title: "tree", output: "ok" })
})

const catalogOf = (tools: ReadonlyArray<Tool>, strictNulls = false): Catalog => ({
  find: (name) => tools.find((t) => t.id === name) ?? tools.find((t) => t.id.toLowerCase() === name.toLowerCase()),
  names: () => tools.map((t) => t.id),
  strictNulls
})

const catalog = catalogOf([Count, Tree, callTool])

const nested = (depth: number): unknown => {
  let v: unknown = 1
  for (let i = 0; i < depth; i++) v = { a: v }
  return v
}

const failure = (r: ReturnType<typeof prepare>) => {
  if (Result.isSuccess(r)) throw new Error("expected a failure")
  return r.failure
}

describe("prepare", () => {
  it("resolves an exact id, repairs a wrong-case name, and names the closest tools for an unknown one", () => {
    const exact = prepare(catalog, { id: "1", name: "count", args: { n: 1 } }, ASKER)
    expect(Result.isSuccess(exact) && exact.success.tool.id).toBe("count")
    const cased = prepare(catalog, { id: "2", name: "COUNT", args: { n: 1 } }, ASKER)
    expect(Result.isSuccess(cased) && cased.success.tool.id).toBe("count")
    const unknown = failure(prepare(catalog, { id: "3", name: "cuont", args: {} }, ASKER))
    expect(unknown.error._tag).toBe("UnknownTool")
    expect(unknown.error.message).toContain('Did you mean "count"')
    expect(unknown.tool).toBe("cuont")
  })

  it("parses a JSON string once, coerces quoted scalars and decodes into the tool's arguments", () => {
    const r = prepare(catalog, { id: "1", name: "count", args: '{"n": "7"}' }, ASKER)
    if (Result.isFailure(r)) throw new Error(r.failure.error.message)
    expect(r.success.args).toEqual({ n: 7 })
    expect(r.success.input).toEqual({ n: "7" })
    expect(r.success.coerced).toEqual(["n"])
    const empty = prepare(
      catalogOf([
        defineTool({
          description: "Takes nothing.",
          id: "none",
          parameters: Schema.Struct({}),
          execute: () => Effect.succeed({ title: "", output: "" })
        })
      ]),
      { id: "2", name: "none", args: "  " },
      ASKER
    )
    expect(Result.isSuccess(empty)).toBe(true)
  })

  it("refuses what is not a JSON object, with InvalidArguments that say what to send", () => {
    for (const args of ["{not json", "[1,2]", 42, '"text"']) {
      const f = failure(prepare(catalog, { id: "1", name: "count", args }, ASKER))
      expect(f.error._tag).toBe("InvalidArguments")
      expect(f.tool).toBe("count")
    }
  })

  it("an argument nested 5,000 deep is InvalidArguments, never a crash; one within the bound decodes", () => {
    // (Written by hand: JSON.stringify itself overflows the stack at this depth.)
    const asText = `{"root":${'{"a":'.repeat(5000)}1${"}".repeat(5000)}}`
    for (const args of [{ root: nested(5000) }, asText, { root: [nested(100_000)] }]) {
      const f = failure(prepare(catalog, { id: "1", name: "tree", args }, ASKER))
      expect(f.error._tag).toBe("InvalidArguments")
      expect(f.error.message).toContain(`deeper than ${MAX_ARGUMENT_DEPTH} levels`)
    }
    // Under strict nulls too (the null walk would meet the depth first).
    const strict = catalogOf([Tree], true)
    const f = failure(prepare(strict, { id: "2", name: "tree", args: { root: nested(5000) } }, ASKER))
    expect(f.error._tag).toBe("InvalidArguments")
    const ok = prepare(catalog, { id: "3", name: "tree", args: { root: nested(MAX_ARGUMENT_DEPTH - 2) } }, ASKER)
    expect(Result.isSuccess(ok)).toBe(true)
  })

  it("drops a strict-mode null for an optional argument only when the catalog reads nulls so", () => {
    const call = { id: "1", name: "count", args: { n: 1, note: null } }
    expect(failure(prepare(catalog, call, ASKER)).error._tag).toBe("InvalidArguments")
    const strict = prepare(catalogOf([Count], true), call, ASKER)
    expect(Result.isSuccess(strict) && strict.success.args).toEqual({ n: 1 })
  })

  it("a forwarding tool is replaced by the call it names, decoded against that tool's schema", () => {
    const r = prepare(catalog, { id: "f", name: "tool_call", args: { name: "count", arguments: '{"n": 3}' } }, ASKER)
    if (Result.isFailure(r)) throw new Error(r.failure.error.message)
    expect(r.success).toMatchObject({ tool: { id: "count" }, args: { n: 3 }, via: "tool_call", call: { id: "f" } })
    const bad = failure(
      prepare(catalog, { id: "g", name: "tool_call", args: { name: "count", arguments: { n: "x" } } }, ASKER)
    )
    expect(bad).toMatchObject({ tool: "count", error: { _tag: "InvalidArguments" }, metadata: { via: "tool_call" } })
    const self = failure(prepare(catalog, { id: "h", name: "tool_call", args: { name: "tool_call" } }, ASKER))
    expect(self.error.message).toBe("Call tool_call directly, not through tool_call.")
    const deep = failure(
      prepare(catalog, { id: "i", name: "tool_call", args: { name: "tree", arguments: { root: nested(5000) } } }, ASKER)
    )
    expect(deep.error._tag).toBe("InvalidArguments")
  })
})

describe("prepare, on generated input", () => {
  it("never throws: any JSON value, any depth, as an object or a string, is an Invocation or a typed failure", () => {
    const strict = catalogOf([Count, Tree, callTool], true)
    fc.assert(
      fc.property(
        fc.jsonValue({ maxDepth: 8 }),
        fc.integer({ min: 0, max: 400 }),
        fc.boolean(),
        (value, depth, asText) => {
          const args = { root: nested(depth), value }
          for (const c of [catalog, strict])
            for (const name of ["tree", "count", "tool_call"]) {
              const sent = asText
                ? `{"root":${'{"a":'.repeat(depth)}1${"}".repeat(depth)},"value":${JSON.stringify(value)}}`
                : args
              const r = prepare(
                c,
                { id: "p", name, args: name === "tool_call" ? { name: "tree", arguments: sent } : sent },
                ASKER
              )
              if (Result.isFailure(r)) expect(["InvalidArguments", "UnknownTool"]).toContain(r.failure.error._tag)
              else expect(depth).toBeLessThan(MAX_ARGUMENT_DEPTH)
            }
        }
      ),
      { seed: 16, numRuns: 150 }
    )
  })
})
