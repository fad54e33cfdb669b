import { describe, expect, it } from "@effect/vitest"
import { coerceArgs } from "../../src/schema/coerce.ts"
import type { JsonSchema } from "../../src/schema/json-schema.ts"

const schema: JsonSchema = {
  type: "object",
  properties: {
    head_limit: { type: "integer" },
    ratio: { type: "number" },
    flag: { type: "boolean" },
    name: { type: "string" },
    either: { type: ["number", "string"] },
    nums: { type: "array", items: { type: "number" } },
    nested: { type: "object", properties: { depth: { type: "integer" }, on: { type: "boolean" } } },
    untyped: {}
  }
}

describe("coerceArgs", () => {
  it("converts unambiguous numeric literals and exact booleans, and reports the paths", () => {
    const out = coerceArgs(schema, {
      head_limit: "30",
      ratio: "-2.5",
      flag: "false",
      nums: ["1", "2"],
      nested: { depth: "3", on: "true" }
    })
    expect(out.value).toEqual({
      head_limit: 30,
      ratio: -2.5,
      flag: false,
      nums: [1, 2],
      nested: { depth: 3, on: true }
    })
    expect(out.paths).toEqual(["head_limit", "ratio", "flag", "nums[0]", "nums[1]", "nested.depth", "nested.on"])
  })

  it("never turns an empty string into 0 or 'false' into true by accident", () => {
    const out = coerceArgs(schema, { head_limit: "", ratio: " 3", flag: "False", nums: ["1e3", "0x10", "+1", "1."] })
    expect(out.value).toEqual({ head_limit: "", ratio: " 3", flag: "False", nums: ["1e3", "0x10", "+1", "1."] })
    expect(out.paths).toEqual([])
    expect(coerceArgs(schema, { flag: "false" }).value).toEqual({ flag: false })
    expect(coerceArgs(schema, { flag: "yes" }).value).toEqual({ flag: "yes" })
  })

  it("leaves strings alone where a string is allowed, and properties with no declared type", () => {
    const out = coerceArgs(schema, { name: "42", either: "7", untyped: "9", unknown: "5" })
    expect(out.value).toEqual({ name: "42", either: "7", untyped: "9", unknown: "5" })
    expect(out.paths).toEqual([])
  })

  it("leaves values that already have the right type untouched", () => {
    const args = { head_limit: 5, flag: true, nums: [1], nested: { depth: 2 } }
    expect(coerceArgs(schema, args)).toEqual({ value: args, paths: [] })
  })
})
