/**
 * `x-mcp-header` declarations and the `Mcp-Param-*` headers of a call (SEP-2243): which
 * declarations make a tool uncallable (and so not offered), and the exact header values, which
 * a 2026-era server compares with the body. On the wire against the official suite's server:
 * bench/conformance-client.ts (`http-custom-headers`, `http-invalid-tool-headers`).
 */
import { describe, expect, it } from "@effect/vitest"
import { parseToolsPage } from "../../src/mcp/list.ts"
import { headerDeclarations, paramHeaders } from "../../src/mcp/param-headers.ts"

const schema = (properties: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
  type: "object",
  properties,
  ...extra
})

describe("x-mcp-header declarations", () => {
  it("string, integer and boolean properties reached through properties, nested too", () => {
    const declared = headerDeclarations(
      schema({
        region: { type: "string", "x-mcp-header": "Region" },
        opts: { type: "object", properties: { level: { type: "integer", "x-mcp-header": "Level" } } },
        query: { type: "string" }
      })
    )
    expect(declared).toEqual({
      ok: true,
      headers: [
        { path: ["region"], name: "Region" },
        { path: ["opts", "level"], name: "Level" }
      ]
    })
  })

  it.each([
    ["an empty name", schema({ v: { type: "string", "x-mcp-header": "" } }), "non-empty"],
    ["a name with a space", schema({ v: { type: "string", "x-mcp-header": "My Region" } }), "not an HTTP header token"],
    ["a name with a colon", schema({ v: { type: "string", "x-mcp-header": "A:B" } }), "not an HTTP header token"],
    ["a non-ASCII name", schema({ v: { type: "string", "x-mcp-header": "Région" } }), "not an HTTP header token"],
    ["a number", schema({ v: { type: "number", "x-mcp-header": "Score" } }), "this one is number"],
    ["an object", schema({ v: { type: "object", "x-mcp-header": "Data" } }), "this one is object"],
    ["an untyped property", schema({ v: { "x-mcp-header": "Any" } }), "this one is untyped"],
    [
      "one name twice, whatever its case",
      schema({ a: { type: "string", "x-mcp-header": "MyField" }, b: { type: "string", "x-mcp-header": "myfield" } }),
      "declared twice"
    ],
    [
      "under items",
      schema({ list: { type: "array", items: { type: "string", "x-mcp-header": "Item" } } }),
      'belongs only on a property reached through "properties"'
    ],
    [
      "under anyOf",
      schema({}, { anyOf: [{ properties: { v: { type: "string", "x-mcp-header": "V" } } }] }),
      'belongs only on a property reached through "properties"'
    ],
    [
      "under $defs",
      schema({}, { $defs: { v: { type: "string", "x-mcp-header": "V" } } }),
      'belongs only on a property reached through "properties"'
    ],
    ["on the root", { type: "object", "x-mcp-header": "Root" }, "the schema's root"]
  ])("%s makes the tool invalid", (_, input, reason) => {
    const declared = headerDeclarations(input)
    expect(declared.ok).toBe(false)
    expect(declared.ok ? "" : declared.reason).toContain(reason)
  })

  it("a tool with invalid declarations is not offered, with the reason; the others keep theirs", () => {
    const page = parseToolsPage({
      tools: [
        { name: "good", inputSchema: schema({ r: { type: "string", "x-mcp-header": "Region" } }) },
        { name: "bad", inputSchema: schema({ s: { type: "number", "x-mcp-header": "Score" } }) },
        { name: "plain", inputSchema: schema({ q: { type: "string" } }) }
      ]
    })
    expect(page.tools.map((t) => [t.name, t.paramHeaders])).toEqual([
      ["good", [{ path: ["r"], name: "Region" }]],
      ["plain", undefined]
    ])
    expect(page.skipped).toEqual([
      { name: "bad", reason: expect.stringContaining("its x-mcp-header declarations are invalid: s: x-mcp-header") }
    ])
  })
})

describe("Mcp-Param-* values", () => {
  const b64 = (text: string) => `=?base64?${Buffer.from(text, "utf8").toString("base64")}?=`
  /** The header for one argument `v` declared as `V`; undefined when none is sent. */
  const one = (value: unknown) => paramHeaders([{ path: ["v"], name: "V" }], { v: value })["Mcp-Param-V"]

  it.each([
    ["plain ASCII", "us-west1", "us-west1"],
    ["inner spaces and a tab inside", "us west\t1", "us west\t1"],
    ["non-ASCII", "Hello, 世界", b64("Hello, 世界")],
    ["leading space", " us-west1", b64(" us-west1")],
    ["trailing space", "us-west1 ", b64("us-west1 ")],
    ["a leading tab", "\tindented", b64("\tindented")],
    ["a newline", "line1\nline2", b64("line1\nline2")],
    ["CR LF", "line1\r\nline2", b64("line1\r\nline2")],
    ["empty", "", b64("")],
    ["what looks like the encoding itself", "=?base64?abc?=", b64("=?base64?abc?=")]
  ])("a string, %s", (_, value, header) => {
    expect(one(value)).toBe(header)
  })

  it("integers in decimal, booleans as true/false; null, absent and values of another kind send none", () => {
    expect(one(42)).toBe("42")
    expect(one(-7)).toBe("-7")
    expect(one(false)).toBe("false")
    expect(one(true)).toBe("true")
    expect(one(null)).toBeUndefined()
    expect(one(undefined)).toBeUndefined()
    expect(one({ a: 1 })).toBeUndefined()
    expect(one(2 ** 60)).toBeUndefined()
    expect(paramHeaders([{ path: ["o", "v"], name: "Deep" }], { o: { v: "x" } })).toEqual({ "Mcp-Param-Deep": "x" })
    expect(paramHeaders([{ path: ["o", "v"], name: "Deep" }], { o: "not an object" })).toEqual({})
  })
})
