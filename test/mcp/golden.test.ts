/**
 * Golden tests on real servers' saved tools/list answers (test/fixtures/mcp/schemas, copied from
 * the team's shared fixtures):
 * every tool converts, the model's schema has no references left and every provider's `tools`
 * parameter accepts it, and the validator built from the server's own schema works.
 */
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Result } from "effect"
import { convertMcpTool } from "../../src/mcp/convert.ts"
import { parseToolsPage } from "../../src/mcp/list.ts"
import { assignToolNames } from "../../src/mcp/names.ts"
import { providers, toolsParam } from "../../src/registry/provider.ts"

const DIR = NodePath.resolve(import.meta.dirname, "../fixtures/mcp/schemas")
const FILES = [
  "everything",
  "everything-nocaps",
  "filesystem",
  "memory",
  "sequential-thinking",
  "github",
  "playwright",
  "chrome-devtools",
  "desktop-commander",
  "hello-world"
]
const fixture = (name: string) => JSON.parse(NodeFs.readFileSync(NodePath.join(DIR, `${name}.json`), "utf8"))

const convertAll = (name: string) => {
  const page = parseToolsPage({ tools: fixture(name).tools })
  const server = { name, trusted: true, maxCallDuration: "1 minute" as const }
  const names = assignToolNames(
    name,
    page.tools.map((t) => t.name)
  )
  const byName = new Map(page.tools.map((t) => [t.name, t]))
  return [...names].map(([ours, theirs]) =>
    convertMcpTool(server, byName.get(theirs)!, () => Effect.die("not called"), ours)
  )
}

describe("golden: saved tool lists of real MCP servers", () => {
  it.each(FILES)("%s: every tool converts into a schema every provider accepts", (name) => {
    const converted = convertAll(name)
    const failures = converted.filter(Result.isFailure).map((r) => r.failure)
    expect(failures).toEqual([])
    const tools = converted.filter(Result.isSuccess).map((r) => r.success.tool)
    // Every tool but the task-only ones (a plain tools/call to those is refused; they are skipped).
    const saved = fixture(name).tools as Array<{ execution?: { taskSupport?: string } }>
    const taskOnly = saved.filter((t) => t.execution?.taskSupport === "required").length
    expect(parseToolsPage({ tools: saved }).skipped).toHaveLength(taskOnly)
    expect(tools).toHaveLength(saved.length - taskOnly)
    for (const tool of tools) {
      expect(tool.id).toMatch(/^[A-Za-z0-9_-]{1,64}$/)
      expect(tool.inputSchema.type).toBe("object")
      const text = JSON.stringify(tool.inputSchema)
      expect(text).not.toContain('"$ref"')
      expect(text).not.toContain('"$schema"')
      expect(text).not.toContain('"$defs"')
    }
    const defs = tools.map((t) => ({ name: t.id, description: t.description, inputSchema: t.inputSchema }))
    for (const provider of providers) expect(JSON.stringify(toolsParam(provider, defs))).not.toContain('"$ref"')
  })

  it("annotations decide mutates/retrySafe: only an explicit readOnlyHint counts", () => {
    const tools = convertAll("filesystem")
      .filter(Result.isSuccess)
      .map((r) => r.success.tool)
    const byId = Object.fromEntries(tools.map((t) => [t.id, t]))
    expect(byId.mcp__filesystem__read_text_file).toMatchObject({ mutates: false, concurrencySafe: true })
    expect(byId.mcp__filesystem__write_file).toMatchObject({ mutates: true, retrySafe: false, concurrencySafe: false })
    // github's tools carry no annotations at all: each is treated as mutating.
    const github = convertAll("github")
      .filter(Result.isSuccess)
      .map((r) => r.success.tool)
    expect(github.every((t) => t.mutates && !t.retrySafe)).toBe(true)
  })

  it("the server's own schema validates: 2020-12 (playwright), type arrays (sequential-thinking), anyOf (github)", () => {
    const get = (name: string, id: string) =>
      convertAll(name)
        .filter(Result.isSuccess)
        .map((r) => r.success.tool)
        .find((t) => t.id === id)!
    const navigate = get("playwright", "mcp__playwright__browser_navigate")
    expect(Result.isSuccess(navigate.decode({ url: "https://example.com" }))).toBe(true)
    const missing = navigate.decode({})
    expect(Result.isFailure(missing) && missing.failure.message).toContain("- url: Missing key")
    const think = get("sequential-thinking", "mcp__sequential-thinking__sequentialthinking")
    const ok = { thought: "t", nextThoughtNeeded: true, thoughtNumber: 1, totalThoughts: 2 }
    expect(Result.isSuccess(think.decode(ok))).toBe(true)
    const bad = think.decode({ ...ok, thoughtNumber: 0, nextThoughtNeeded: 3 })
    expect(Result.isFailure(bad) && bad.failure.issues.map((i) => i.path)).toEqual(
      expect.arrayContaining(["thoughtNumber", "nextThoughtNeeded"])
    )
  })
})
