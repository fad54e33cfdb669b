import { describe, expect, it } from "@effect/vitest"
import { lowerOneOf, MAX_RECURSION, mergeAllOf, resolveSchema } from "../../src/schema/resolve.ts"

describe("resolveSchema", () => {
  it("inlines local $ref from $defs (2020-12) and definitions (draft-07), dropping the document keys", () => {
    const modern = resolveSchema({
      $schema: "https://json-schema.org/draft/2020-12/schema",
      type: "object",
      properties: { to: { $ref: "#/$defs/address" } },
      $defs: { address: { type: "object", properties: { city: { type: "string" } }, required: ["city"] } }
    })
    expect(modern.dialect).toBe("2020-12")
    expect(modern.schema).toEqual({
      type: "object",
      properties: { to: { type: "object", properties: { city: { type: "string" } }, required: ["city"] } }
    })
    const old = resolveSchema({
      $schema: "http://json-schema.org/draft-07/schema#",
      type: "object",
      properties: { n: { $ref: "#/definitions/count" } },
      definitions: { count: { type: "integer", minimum: 0 } }
    })
    expect(old.dialect).toBe("draft-07")
    expect(old.schema.properties).toEqual({ n: { type: "integer", minimum: 0 } })
  })

  it("follows any JSON pointer, with ~1 and ~0 escapes, and keeps keywords beside a $ref", () => {
    const { schema } = resolveSchema({
      type: "object",
      properties: {
        a: { type: "string", enum: ["x", "y"] },
        b: { $ref: "#/properties/a", description: "same as a" },
        c: { $ref: "#/$defs/a~1b~0c" }
      },
      $defs: { "a/b~c": { type: "boolean" } }
    })
    expect(schema.properties.b).toEqual({ type: "string", enum: ["x", "y"], description: "same as a" })
    expect(schema.properties.c).toEqual({ type: "boolean" })
  })

  it("cuts recursion after a bounded depth instead of looping", () => {
    const { schema, notes } = resolveSchema({
      type: "object",
      properties: { root: { $ref: "#/$defs/node" } },
      $defs: {
        node: {
          type: "object",
          description: "A node",
          properties: { value: { type: "number" }, children: { type: "array", items: { $ref: "#/$defs/node" } } }
        }
      }
    })
    let depth = 0
    let at: Record<string, unknown> | undefined = schema.properties.root as Record<string, unknown>
    while (at !== undefined && (at.properties as Record<string, unknown> | undefined)?.children !== undefined) {
      depth++
      at = (at.properties as Record<string, { items: Record<string, unknown> }>).children?.items
    }
    expect(depth).toBe(MAX_RECURSION)
    expect(at).toEqual({ type: "object", description: "A node (recursive: same shape as its parent)" })
    expect(notes).toEqual([`the recursive reference #/$defs/node was cut after ${MAX_RECURSION} levels`])
  })

  it("merges allOf: properties, required, types intersected; unmergeable keys stay in a smaller allOf", () => {
    const { schema } = resolveSchema({
      type: "object",
      allOf: [
        { $ref: "#/$defs/named" },
        { properties: { age: { type: "integer" }, name: { maxLength: 10 } }, required: ["age"] },
        { properties: { tag: { type: "string", pattern: "^a" } } },
        { properties: { tag: { pattern: "^b" } } }
      ],
      $defs: { named: { type: "object", properties: { name: { type: "string" } }, required: ["name"] } }
    })
    expect(schema.required).toEqual(["name", "age"])
    expect(schema.properties.name).toEqual({ type: "string", maxLength: 10 })
    expect(schema.properties.tag).toEqual({ type: "string", pattern: "^a", allOf: [{ pattern: "^b" }] })
    expect(schema.allOf).toBeUndefined()
    expect(mergeAllOf([{ type: ["number", "string"] }, { type: "integer" }])).toEqual({ type: "integer" })
  })

  it("keeps oneOf/anyOf inside properties, and makes a top-level union one object a provider accepts", () => {
    const inner = resolveSchema({
      type: "object",
      properties: { v: { anyOf: [{ type: "string" }, { type: "null" }] } }
    })
    expect(inner.schema.properties.v).toEqual({ anyOf: [{ type: "string" }, { type: "null" }] })

    const top = resolveSchema({
      description: "Find a user.",
      oneOf: [
        { type: "object", properties: { id: { type: "integer" }, verbose: { type: "boolean" } }, required: ["id"] },
        { type: "object", properties: { email: { type: "string" }, verbose: { type: "boolean" } }, required: ["email"] }
      ]
    })
    expect(top.schema).toEqual({
      type: "object",
      description: "Find a user. Exactly one of these argument sets: (1) id; (2) email.",
      properties: { id: { type: "integer" }, verbose: { type: "boolean" }, email: { type: "string" } }
    })
  })

  it("accepts a schema without type or properties as an empty object, strips ±2^53 noise", () => {
    expect(resolveSchema({}).schema).toEqual({ type: "object", properties: {} })
    const { schema } = resolveSchema({
      type: "object",
      properties: { n: { type: "integer", minimum: Number.MIN_SAFE_INTEGER, maximum: Number.MAX_SAFE_INTEGER } }
    })
    expect(schema.properties.n).toEqual({ type: "integer" })
  })

  it("refuses what cannot describe a tool's arguments, saying why", () => {
    expect(() => resolveSchema("nope")).toThrow('the schema is "nope", not a JSON object')
    expect(() => resolveSchema({ type: "string" })).toThrow('top-level type is "string"')
    expect(() => resolveSchema({ type: "object", properties: { x: { $ref: "#/$defs/gone" } } })).toThrow(
      "$ref #/$defs/gone points at nothing"
    )
  })

  it("leaves a remote $ref unfollowed with a note (nothing is fetched)", () => {
    const { schema, notes } = resolveSchema({
      type: "object",
      properties: { x: { $ref: "https://example.com/schema.json", description: "remote" } }
    })
    expect(schema.properties.x).toEqual({ description: "remote" })
    expect(notes).toEqual(["the remote reference https://example.com/schema.json was not followed"])
  })
})

describe("lowerOneOf", () => {
  it("turns oneOf into anyOf everywhere, but never renames a property called oneOf", () => {
    expect(
      lowerOneOf({
        type: "object",
        properties: { oneOf: { type: "string" }, v: { oneOf: [{ type: "string" }, { type: "number" }] } }
      })
    ).toEqual({
      type: "object",
      properties: { oneOf: { type: "string" }, v: { anyOf: [{ type: "string" }, { type: "number" }] } }
    })
  })
})
