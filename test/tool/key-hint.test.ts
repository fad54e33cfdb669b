import fc from "fast-check"
import { describe, expect, it } from "vitest"
import type { JsonSchema } from "../../src/schema/json-schema.ts"
import { intendedKey } from "../../src/tool/key-hint.ts"
import { builtinTools } from "../../src/tools/index.ts"

const schemaOf = (id: string): JsonSchema => builtinTools.find((t) => t.id === id)!.inputSchema

describe("did you mean, for an argument the tool does not take", () => {
  it("answers Claude Code's names with ours", () => {
    expect(intendedKey(schemaOf("read"), ["file_path"])).toBe("filePath")
    expect(intendedKey(schemaOf("edit"), ["old_string"])).toBe("oldString")
    expect(intendedKey(schemaOf("edit"), ["new_string"])).toBe("newString")
    expect(intendedKey(schemaOf("edit"), ["replace_all"])).toBe("replaceAll")
    expect(intendedKey(schemaOf("read"), ["limt"])).toBe("limit")
  })

  it("finds the key inside a nested object or array item", () => {
    const schema: JsonSchema = {
      type: "object",
      properties: { todos: { type: "array", items: { type: "object", properties: { content: {}, status: {} } } } }
    }
    expect(intendedKey(schema, ["todos", 0, "Content"])).toBe("content")
  })

  it("suggests nothing for a name unlike every parameter", () => {
    expect(intendedKey(schemaOf("read"), ["recursive"])).toBeUndefined()
    expect(intendedKey(schemaOf("read"), [0])).toBeUndefined()
  })

  it("only ever suggests a parameter the object has (generated names)", () => {
    const schema = schemaOf("edit")
    const known = Object.keys(schema.properties ?? {})
    fc.assert(
      fc.property(fc.string({ maxLength: 20 }), (name) => {
        const meant = intendedKey(schema, [name])
        expect(meant === undefined || known.includes(meant)).toBe(true)
      }),
      { seed: 20, numRuns: 300 }
    )
  })
})
