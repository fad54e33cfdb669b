import { describe, expect, it } from "@effect/vitest"
import { Schema } from "effect"
import { deriveParameters } from "../../src/schema/derive.ts"

describe("deriveParameters", () => {
  it("derives a closed object schema with descriptions, without Int's ±2^53 noise", () => {
    const schema = deriveParameters(
      "t",
      Schema.Struct({
        path: Schema.String.annotate({ description: "A path." }),
        limit: Schema.optionalKey(Schema.Int.annotate({ description: "Lines." }))
      })
    )
    expect(schema).toEqual({
      type: "object",
      properties: {
        path: { type: "string", description: "A path." },
        limit: { type: "integer", description: "Lines." }
      },
      required: ["path"],
      additionalProperties: false
    })
  })

  it("gives an empty Struct an empty object schema that every provider accepts", () => {
    expect(deriveParameters("t", Schema.Struct({}))).toEqual({
      type: "object",
      properties: {},
      additionalProperties: false
    })
  })

  it("refuses parameters that are not an object", () => {
    expect(() => deriveParameters("t", Schema.String)).toThrow("tool t: parameters must be a Schema.Struct")
  })
})
