/**
 * Provider dialect compilers: each rule on hand-written schemas, then golden tests on the saved
 * tools/list answers of real MCP servers (test/fixtures/mcp/schemas) — both the servers' raw
 * schemas and the ones our resolver made of them — checking every dialect's invariants at every
 * level, and pinning what each compiler reports in golden files.
 */
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Result } from "effect"
import { McpClients } from "../../src/mcp/clients.ts"
import { convertMcpTool } from "../../src/mcp/convert.ts"
import { parseToolsPage } from "../../src/mcp/list.ts"
import { dialectReport, providers, type ToolDefinition, toolsParam } from "../../src/registry/provider.ts"
import { ToolRegistry } from "../../src/registry/registry.ts"
import {
  type Compiled,
  compileAnthropic,
  compileGemini,
  compileOpenAIStrict,
  dropStrictNulls
} from "../../src/schema/dialects/index.ts"
import { isRecord } from "../../src/schema/json-schema.ts"
import { npmServer, systemWithMcp } from "../mcp/helpers.ts"

const DIR = NodePath.resolve(import.meta.dirname, "../fixtures/mcp/schemas")
const FIXTURES = NodeFs.readdirSync(DIR)
  .filter((f) => f.endsWith(".json"))
  .map((f) => f.slice(0, -5))
  .sort()
const rawTools = (name: string): ReadonlyArray<{ name: string; inputSchema: Record<string, unknown> }> =>
  JSON.parse(NodeFs.readFileSync(NodePath.join(DIR, `${name}.json`), "utf8")).tools

/** Every schema node under `schema` (itself included), with its path. */
const nodes = (schema: unknown, path = ""): Array<[string, Record<string, unknown>]> => {
  if (!isRecord(schema)) return []
  const out: Array<[string, Record<string, unknown>]> = [[path, schema]]
  for (const [key, value] of Object.entries(schema)) {
    const here = path === "" ? key : `${path}.${key}`
    if (["properties", "$defs", "definitions", "patternProperties"].includes(key) && isRecord(value)) {
      for (const [k, v] of Object.entries(value)) out.push(...nodes(v, `${here}.${k}`))
    } else if (["anyOf", "oneOf", "allOf", "prefixItems"].includes(key) && Array.isArray(value)) {
      for (const [i, v] of value.entries()) out.push(...nodes(v, `${here}[${i}]`))
    } else if (["items", "additionalProperties", "not"].includes(key)) {
      out.push(...nodes(value, here))
    }
  }
  return out
}

const GEMINI_KEYS = new Set([
  "type",
  "format",
  "title",
  "description",
  "nullable",
  "enum",
  "maxItems",
  "minItems",
  "properties",
  "required",
  "minProperties",
  "maxProperties",
  "minLength",
  "maxLength",
  "pattern",
  "example",
  "anyOf",
  "propertyOrdering",
  "default",
  "items",
  "minimum",
  "maximum"
])
const STRICT_BANNED = [
  "format",
  "pattern",
  "minLength",
  "maxLength",
  "minimum",
  "maximum",
  "default",
  "$schema",
  "oneOf",
  "allOf"
]

const checkAnthropic = (c: Compiled) => {
  expect(c.schema.type).toBe("object")
  for (const k of ["oneOf", "anyOf", "allOf"]) expect(c.schema).not.toHaveProperty(k)
}

const checkStrict = (c: Compiled & { strict: boolean }) => {
  checkAnthropic(c)
  for (const [path, node] of nodes(c.schema)) {
    for (const k of STRICT_BANNED) expect(node, `${path}.${k}`).not.toHaveProperty(k)
    if (isRecord(node.properties)) {
      expect(node.additionalProperties, path).toBe(false)
      expect([...(node.required as Array<string>)].sort(), path).toEqual(Object.keys(node.properties).sort())
    }
  }
}

const checkGemini = (c: Compiled) => {
  const text = JSON.stringify(c.schema)
  expect(text).not.toContain('"$ref"')
  expect(text).not.toContain('"$defs"')
  for (const [path, node] of nodes(c.schema)) {
    for (const key of Object.keys(node)) expect(GEMINI_KEYS.has(key), `${path}: ${key}`).toBe(true)
    expect(Array.isArray(node.type), `${path}: type array`).toBe(false)
    if (Array.isArray(node.enum)) {
      expect(node.type, path).toBe("string")
      for (const v of node.enum) expect(typeof v, path).toBe("string")
    }
    if (Array.isArray(node.required)) {
      const names = isRecord(node.properties) ? Object.keys(node.properties) : []
      for (const r of node.required) expect(names, `${path}: required ${r}`).toContain(r)
    }
  }
}

describe("compileAnthropic", () => {
  it("merges a top-level union into one object, requiring only what every branch requires", () => {
    const c = compileAnthropic({
      oneOf: [
        {
          type: "object",
          properties: { path: { type: "string" }, recursive: { type: "boolean" } },
          required: ["path"]
        },
        { type: "object", properties: { path: { type: "string" }, url: { type: "string" } }, required: ["path", "url"] }
      ]
    })
    expect(c.schema).toEqual({
      type: "object",
      properties: { path: { type: "string" }, recursive: { type: "boolean" }, url: { type: "string" } },
      required: ["path"]
    })
    expect(c.changes).toEqual([expect.objectContaining({ path: "oneOf", keyword: "oneOf", action: "rewrote" })])
  })

  it("merges a top-level allOf; leaves nested unions and an already-plain schema alone", () => {
    const c = compileAnthropic({
      type: "object",
      allOf: [
        { properties: { a: { type: "string" } }, required: ["a"] },
        { properties: { b: { anyOf: [{ type: "string" }, { type: "number" }] } } }
      ]
    })
    expect(c.schema).toEqual({
      type: "object",
      properties: { a: { type: "string" }, b: { anyOf: [{ type: "string" }, { type: "number" }] } },
      required: ["a"]
    })
    expect(c.changes.map((x) => x.keyword)).toEqual(["allOf"])
    const plain = { type: "object", properties: { x: { oneOf: [{ type: "string" }, { type: "integer" }] } } }
    expect(compileAnthropic(plain)).toEqual({ schema: plain, changes: [] })
  })
})

describe("compileOpenAIStrict", () => {
  it("requires every property, makes the optional ones nullable, closes every object, drops what strict mode rejects", () => {
    const c = compileOpenAIStrict({
      $schema: "https://json-schema.org/draft/2020-12/schema",
      type: "object",
      properties: {
        url: { type: "string", format: "uri" },
        limit: { type: "integer", minimum: 1, default: 10 },
        mode: { type: "string", enum: ["a", "b"] },
        nested: { type: "object", properties: { x: { type: "number" } } },
        pick: { oneOf: [{ type: "string" }, { type: "number" }] }
      },
      required: ["url"]
    })
    expect(c.strict).toBe(true)
    expect(c.schema).toEqual({
      type: "object",
      properties: {
        url: { type: "string" },
        limit: { type: ["integer", "null"] },
        mode: { type: ["string", "null"], enum: ["a", "b", null] },
        nested: {
          type: ["object", "null"],
          properties: { x: { type: ["number", "null"] } },
          required: ["x"],
          additionalProperties: false
        },
        pick: { anyOf: [{ type: "string" }, { type: "number" }, { type: "null" }] }
      },
      required: ["url", "limit", "mode", "nested", "pick"],
      additionalProperties: false
    })
    const described = c.changes.map((x) => `${x.action} ${x.path}`)
    expect(described).toEqual(
      expect.arrayContaining([
        "dropped $schema",
        "dropped properties.url.format",
        "dropped properties.limit.minimum",
        "dropped properties.limit.default",
        "rewrote properties.pick.oneOf",
        "rewrote properties.nested.required",
        "rewrote required"
      ])
    )
  })

  it("an open map cannot be strict: strict is false and the report says why", () => {
    const c = compileOpenAIStrict({
      type: "object",
      properties: { env: { type: "object", additionalProperties: { type: "string" } } }
    })
    expect(c.strict).toBe(false)
    expect(c.changes).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ path: "properties.env.additionalProperties", action: "rewrote" })
      ])
    )
    const param = toolsParam("openai-strict", [
      {
        name: "run",
        description: "Run.",
        inputSchema: {
          type: "object",
          properties: { env: { type: "object", additionalProperties: { type: "string" } } }
        }
      },
      { name: "ls", description: "List.", inputSchema: { type: "object", properties: { path: { type: "string" } } } }
    ]) as Array<{ function: { strict: boolean; parameters: Record<string, unknown> } }>
    expect(param.map((p) => p.function.strict)).toEqual([false, true])
    expect(param[0]!.function.parameters).toEqual({
      type: "object",
      properties: { env: { type: "object", additionalProperties: { type: "string" } } }
    })
  })

  it("an object that names no properties is an open map too (JSON Schema's default), not a closed empty one", () => {
    const c = compileOpenAIStrict({
      type: "object",
      properties: { name: { type: "string" }, arguments: { type: "object" } },
      required: ["name"]
    })
    expect(c.strict).toBe(false)
    expect(c.changes).toEqual(
      expect.arrayContaining([expect.objectContaining({ path: "properties.arguments.additionalProperties" })])
    )
    // An object with named properties is still closed and strict.
    expect(compileOpenAIStrict({ type: "object", properties: { a: { type: "string" } } }).strict).toBe(true)
  })

  it("dropStrictNulls reads null for an optional argument as absent, at every level", () => {
    const schema = {
      type: "object",
      properties: {
        a: { type: "string" },
        b: { type: "integer" },
        c: { type: ["string", "null"] },
        todos: {
          type: "array",
          items: { type: "object", properties: { id: { type: "string" }, note: { type: "string" } }, required: ["id"] }
        }
      },
      required: ["a"]
    }
    expect(dropStrictNulls(schema, { a: null, b: null, c: null, todos: [{ id: "1", note: null }] })).toEqual({
      a: null,
      c: null,
      todos: [{ id: "1" }]
    })
  })
})

describe("compileGemini", () => {
  it("inlines $ref (cutting recursion), lowers type arrays, stringifies enums, keeps required to real properties", () => {
    const c = compileGemini({
      $schema: "http://json-schema.org/draft-07/schema#",
      type: "object",
      properties: {
        root: { $ref: "#/definitions/node" },
        level: { type: "integer", enum: [1, 2, 3] },
        maybe: { type: ["string", "null"] },
        either: { type: ["string", "number"] },
        kind: { const: "circle" },
        when: { type: "string", format: "date-time" },
        site: { type: "string", format: "uri" },
        empty: { type: "object", properties: {}, additionalProperties: false }
      },
      required: ["root", "ghost"],
      additionalProperties: false,
      definitions: {
        node: {
          type: "object",
          properties: { value: { type: "number" }, children: { type: "array", items: { $ref: "#/definitions/node" } } },
          required: ["value"]
        }
      }
    })
    checkGemini(c)
    const props = c.schema.properties as Record<string, Record<string, unknown>>
    expect(props.level).toEqual({ type: "string", enum: ["1", "2", "3"] })
    expect(props.maybe).toEqual({ type: "string", nullable: true })
    expect(props.either).toEqual({ anyOf: [{ type: "string" }, { type: "number" }] })
    expect(props.kind).toEqual({ type: "string", enum: ["circle"] })
    expect(props.when).toEqual({ type: "string", format: "date-time" })
    expect(props.site).toEqual({ type: "string" })
    expect(props.empty).toEqual({ type: "object" })
    expect(c.schema.required).toEqual(["root"])
    // Three levels of the recursive node, then any object.
    const depth = (n: unknown): number =>
      isRecord(n) && isRecord(n.properties) && isRecord((n.properties as Record<string, unknown>).children)
        ? 1 + depth((n.properties as Record<string, Record<string, unknown>>).children!.items as unknown)
        : 0
    expect(depth(props.root)).toBe(3)
    const described = c.changes.map((x) => `${x.action} ${x.path}`)
    expect(described).toEqual(
      expect.arrayContaining([
        "dropped $schema",
        "dropped definitions",
        "dropped additionalProperties",
        "rewrote properties.root.$ref",
        "rewrote properties.level.enum",
        "rewrote properties.maybe.type",
        "rewrote properties.kind.const",
        "dropped properties.site.format",
        "rewrote required"
      ])
    )
  })
})

/** What each dialect compiler reports for these tools, one line per change (the golden files' format). */
const reportLines = (defs: ReadonlyArray<ToolDefinition>): Array<string> => {
  const lines: Array<string> = []
  for (const provider of ["anthropic", "openai-strict", "gemini"] as const) {
    for (const { tool, changes } of dialectReport(provider, defs)) {
      for (const c of changes)
        lines.push(`${provider} ${tool} ${c.action} ${c.path}${c.detail === undefined ? "" : ` — ${c.detail}`}`)
    }
  }
  return lines
}

/** Our resolver's schema of every tool of a fixture (what the registry holds). */
const resolvedTools = (name: string) => {
  const page = parseToolsPage({ tools: rawTools(name) })
  return page.tools.map((info) => {
    const converted = convertMcpTool({ name, trusted: true, maxCallDuration: "1 minute" }, info, () =>
      Effect.die("not called")
    )
    if (Result.isFailure(converted)) throw new Error(converted.failure)
    return converted.success.tool
  })
}

describe("golden: real MCP servers' tool lists", () => {
  it.each(FIXTURES)("%s: every raw and resolved schema compiles into each dialect's rules", (name) => {
    const schemas = [
      ...rawTools(name).map((t) => [`raw ${t.name}`, t.inputSchema] as const),
      ...resolvedTools(name).map((t) => [`resolved ${t.id}`, t.inputSchema as Record<string, unknown>] as const)
    ]
    expect(schemas.length).toBeGreaterThan(0)
    for (const [, schema] of schemas) {
      const before = JSON.stringify(schema)
      checkAnthropic(compileAnthropic(schema))
      checkStrict(compileOpenAIStrict(schema))
      checkGemini(compileGemini(schema))
      // Compilers never touch their input.
      expect(JSON.stringify(schema)).toBe(before)
      // No change reported ⇔ nothing changed (Anthropic keeps a plain object as it is).
      const a = compileAnthropic(schema)
      expect(a.changes.length === 0).toBe(JSON.stringify(a.schema) === before)
    }
  })

  it.each(FIXTURES)("%s: what each dialect drops and rewrites (golden file)", async (name) => {
    const defs = resolvedTools(name).map((t) => ({
      name: t.id,
      description: t.description,
      inputSchema: t.inputSchema
    }))
    const lines = reportLines(defs)
    for (const provider of providers) expect(JSON.stringify(toolsParam(provider, defs))).not.toContain('"$ref"')
    await expect(`${lines.join("\n")}\n`).toMatchFileSnapshot(`golden/${name}.dialects.txt`)
  })
})

/**
 * The same compilers on what the MCP servers installed from npm list right now, through our
 * real client: every tool compiles into each dialect's rules, and a tool that is also in the
 * saved list gets exactly the report its golden file pins (the saved lists were taken from
 * these servers, so a change in either shows up here).
 */
describe("golden: the installed MCP servers, live", () => {
  it.live(
    "server-everything, -filesystem, -memory and -sequential-thinking: live tool lists compile, reports match the golden files",
    () => {
      const dir = NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "freecode-dialects-live-"))
      const servers = {
        everything: npmServer("mcp-server-everything"),
        filesystem: npmServer("mcp-server-filesystem", [dir]),
        memory: {
          ...npmServer("mcp-server-memory"),
          env: { ...npmServer("x").env, MEMORY_FILE_PATH: NodePath.join(dir, "memory.jsonl") }
        },
        "sequential-thinking": {
          ...npmServer("mcp-server-sequential-thinking"),
          env: { ...npmServer("x").env, DISABLE_THOUGHT_LOGGING: "true" }
        }
      }
      return Effect.gen(function* () {
        const clients = yield* McpClients
        yield* clients.ready
        // server-everything registers more tools after initializing and says so: wait for the re-listing.
        for (let i = 0; i < 200; i++) {
          const everything = (yield* clients.status).find((s) => s.name === "everything")
          if (everything !== undefined && everything.lists >= 2) break
          yield* Effect.sleep("50 millis")
        }
        const status = yield* clients.status
        expect(status.map((s) => [s.name, s.state])).toEqual(
          Object.keys(servers).map((name) => [name, "connected"] as const)
        )
        const tools = (yield* (yield* ToolRegistry).tools).filter((t) => t.source === "mcp")
        for (const name of Object.keys(servers)) {
          const live = tools.filter((t) => t.id.startsWith(`mcp__${name}__`))
          expect(live.length, name).toBeGreaterThan(0)
          for (const tool of live) {
            checkAnthropic(compileAnthropic(tool.inputSchema))
            checkStrict(compileOpenAIStrict(tool.inputSchema))
            checkGemini(compileGemini(tool.inputSchema))
          }
          // Our client declares no capabilities: server-everything then serves its no-capabilities list.
          const fixture = name === "everything" ? "everything-nocaps" : name
          const golden = NodeFs.readFileSync(
            NodePath.join(import.meta.dirname, `golden/${fixture}.dialects.txt`),
            "utf8"
          )
          const saved = new Set(resolvedTools(fixture).map((t) => t.id.replace(`mcp__${fixture}__`, `mcp__${name}__`)))
          const common = live.filter((t) => saved.has(t.id))
          // Every tool of the saved list is still served.
          expect(common.length, name).toBe(saved.size)
          const ids = new Set(common.map((t) => t.id))
          const expected = golden
            .replaceAll(`mcp__${fixture}__`, `mcp__${name}__`)
            .split("\n")
            .filter((l) => l !== "" && ids.has(l.split(" ")[1]!))
          const measured = reportLines(
            common.map((t) => ({ name: t.id, description: t.description, inputSchema: t.inputSchema }))
          )
          // The registry orders tools by name, the saved list by the server's order.
          expect([...measured].sort(), name).toEqual([...expected].sort())
        }
      }).pipe(
        Effect.provide(systemWithMcp({ servers, root: dir })),
        Effect.ensuring(Effect.sync(() => NodeFs.rmSync(dir, { recursive: true, force: true })))
      )
    },
    120_000
  )
})
