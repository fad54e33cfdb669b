/**
 * The fast argument check says yes only for input Schema's decode accepts and returns unchanged,
 * and (for a plain schema) says yes to every such input. Checked against Schema itself on
 * generated arguments for every built-in tool, and on schemas with every kind of node it knows;
 * schemas it does not know get no fast check.
 */
import { describe, expect, it } from "@effect/vitest"
import { Result, Schema } from "effect"
import { type PlainCheck, plainCheck } from "../../src/schema/plain-decode.ts"
import { DECODE_OPTIONS } from "../../src/tool/tool.ts"
import { builtinTools } from "../../src/tools/index.ts"

/** A small seeded generator: the same inputs on every run. */
const random = (seed: number) => () => {
  seed = (seed * 1103515245 + 12345) & 0x7fffffff
  return seed / 0x7fffffff
}

type Json = Record<string, unknown>

/** Values of every kind, right and wrong, for a JSON Schema node. */
const valueFor = (schema: Json, rnd: () => number, depth = 0): unknown => {
  const wild = [null, undefined, "", "x", 0, -1, 1.5, 3, Number.NaN, Number.POSITIVE_INFINITY, true, [], {}, ["a"]]
  if (rnd() < 0.15 || depth > 3) return wild[Math.floor(rnd() * wild.length)]
  if (Array.isArray(schema.enum)) return schema.enum[Math.floor(rnd() * schema.enum.length)]
  if (Array.isArray(schema.anyOf))
    return valueFor(schema.anyOf[Math.floor(rnd() * schema.anyOf.length)] as Json, rnd, depth)
  switch (schema.type) {
    case "string":
      return rnd() < 0.1 ? "" : `s${Math.floor(rnd() * 100)}`
    case "integer":
      return Math.floor(rnd() * 10) - 2
    case "number":
      return rnd() * 10 - 2
    case "boolean":
      return rnd() < 0.5
    case "array":
      return Array.from({ length: Math.floor(rnd() * 3) }, () => valueFor(schema.items as Json, rnd, depth + 1))
    case "object":
      return objectFor(schema, rnd, depth + 1)
    default:
      return "const" in schema ? schema.const : wild[Math.floor(rnd() * wild.length)]
  }
}

const objectFor = (schema: Json, rnd: () => number, depth = 0): Json => {
  const out: Json = {}
  const required = new Set((schema.required as Array<string> | undefined) ?? [])
  for (const [key, sub] of Object.entries((schema.properties as Record<string, Json> | undefined) ?? {})) {
    if (!required.has(key) && rnd() < 0.4) continue
    if (required.has(key) && rnd() < 0.05) continue
    out[key] = valueFor(sub, rnd, depth)
  }
  if (rnd() < 0.05) out.extra = 1
  return out
}

/** Compares the fast check with Schema's decode on `inputs`; returns how many the check accepted. */
const agree = (schema: Schema.Codec<unknown, unknown, never, unknown>, check: PlainCheck, inputs: Array<unknown>) => {
  const decode = Schema.decodeUnknownResult(schema)
  let accepted = 0
  for (const input of inputs) {
    const full = decode(input, DECODE_OPTIONS)
    const fast = check(input)
    // Yes only where the decode says yes and returns the input as it is; yes wherever it does.
    const keys = typeof input === "object" && input !== null ? Reflect.ownKeys(input).map(String) : []
    expect({ input, keys, fast }).toEqual({ input, keys, fast: Result.isSuccess(full) && isEqual(full.success, input) })
    if (fast) accepted++
  }
  return accepted
}

/** The same value through and through: same prototypes, same own keys (symbols too), same leaves. */
const isEqual = (a: unknown, b: unknown): boolean => {
  if (typeof a !== "object" || a === null || typeof b !== "object" || b === null) return Object.is(a, b)
  if (Object.getPrototypeOf(a) !== Object.getPrototypeOf(b)) return false
  const keys = Reflect.ownKeys(a)
  if (keys.length !== Reflect.ownKeys(b).length) return false
  return keys.every(
    (k) =>
      Object.hasOwn(b, k) && isEqual((a as Record<PropertyKey, unknown>)[k], (b as Record<PropertyKey, unknown>)[k])
  )
}

describe("plainCheck", () => {
  for (const tool of builtinTools) {
    it(`agrees with Schema's decode for ${tool.id}`, () => {
      const parameters = tool.parameters!
      const check = plainCheck(parameters.ast, DECODE_OPTIONS)
      // Every built-in tool's arguments are plain JSON: none goes without the fast check.
      expect(check).toBeDefined()
      const rnd = random(tool.id.length * 7919)
      const inputs: Array<unknown> = [undefined, null, "x", [], {}, 1]
      for (let i = 0; i < 400; i++) inputs.push(objectFor(tool.inputSchema as Json, rnd))
      const accepted = agree(parameters, check!, inputs)
      expect(accepted).toBeGreaterThan(0)
    })
  }

  const Kinds = Schema.Struct({
    name: Schema.String,
    count: Schema.optionalKey(Schema.Int.check(Schema.isGreaterThan(0))),
    ratio: Schema.optional(Schema.Number),
    mode: Schema.optionalKey(Schema.Literals(["fast", "slow"])),
    tags: Schema.optionalKey(Schema.Array(Schema.String.check(Schema.isMinLength(2)))),
    nested: Schema.optionalKey(Schema.Struct({ on: Schema.Boolean, note: Schema.NullOr(Schema.String) }))
  })

  it("knows every kind of node it accepts, and what each one rejects", () => {
    const check = plainCheck(Kinds.ast, DECODE_OPTIONS)!
    expect(check).toBeDefined()
    const inputs: Array<unknown> = [
      { name: "a" },
      { name: "a", count: 2, ratio: 0.5, mode: "fast", tags: ["ab"], nested: { on: true, note: null } },
      { name: "a", ratio: undefined },
      { name: "a", count: undefined },
      { name: "a", count: 0 },
      { name: "a", count: 1.5 },
      { name: "a", count: Number.NaN },
      { name: "a", ratio: Number.POSITIVE_INFINITY },
      { name: "a", ratio: Number.NaN },
      { name: "a", mode: "medium" },
      { name: "a", tags: ["a"] },
      { name: "a", tags: "ab" },
      // biome-ignore lint/suspicious/noSparseArray: a hole is what is tested
      { name: "a", tags: [, "ab"] },
      { name: "a", nested: { on: "yes", note: null } },
      { name: "a", nested: { on: true } },
      { name: "a", nested: { on: true, note: "n", more: 1 } },
      { name: 1 },
      {},
      { name: "a", other: 1 },
      Object.assign(Object.create({ inherited: 1 }), { name: "a" }),
      Object.assign(Object.create(null), { name: "a" }),
      { name: "a", [Symbol("s")]: 1 },
      []
    ]
    expect(agree(Kinds as never, check, inputs)).toBeGreaterThanOrEqual(3)
  })

  it("hands on a copy, as the decode does: what was checked is the tool's own", () => {
    const ls = builtinTools.find((t) => t.id === "ls")!
    const input = { path: "src", ignore: ["dist/", "*.snap"] }
    const decoded = ls.decode(input)
    if (Result.isFailure(decoded)) throw new Error(decoded.failure.message)
    const args = decoded.success as typeof input
    expect(args).toEqual(input)
    expect(args).not.toBe(input)
    expect(args.ignore).not.toBe(input.ignore)
    // The caller (or a hook handed the same object) changing it later changes nothing that runs.
    input.path = "/etc"
    input.ignore.push("x")
    expect(args).toEqual({ path: "src", ignore: ["dist/", "*.snap"] })
  })

  it("gives no fast check to a schema that transforms or that it does not know", () => {
    for (const schema of [
      Schema.Struct({ n: Schema.NumberFromString }),
      Schema.Struct({ pair: Schema.Tuple([Schema.String, Schema.Number]) }),
      Schema.Struct({ map: Schema.Record(Schema.String, Schema.Number) }),
      Schema.Struct({ when: Schema.Date })
    ]) {
      expect(plainCheck(schema.ast, DECODE_OPTIONS)).toBeUndefined()
    }
  })
})
