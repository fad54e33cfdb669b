/**
 * The schema tax: what the declared tools cost on every request, per surface and provider, on
 * our own tools plus a real MCP server with 200 tools (test/fixtures/mcp/catalogue.ts, built from
 * real servers' saved tool lists). Tokens are o200k_base tokens of each provider entry's compact
 * JSON. Targets: all built-ins ≤ 4,000 tokens; the deferred surface ≤ 600; 200 MCP tools add
 * < 1,000 under deferred. Also the one-time cost of finding a tool, and how long it takes.
 *   node bench/schema-tax.ts
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { Context, Effect, Layer } from "effect"
import { ToolSystem } from "../layers/live.ts"
import { countTokens } from "../src/cli/estimate.ts"
import { McpClients } from "../src/mcp/clients.ts"
import { type Provider, toolsParam } from "../src/registry/provider.ts"
import { type SurfaceOptions, surfaceIn } from "../src/surface/surface.ts"
import type { Tool } from "../src/tool/tool.ts"
import { AgentTool } from "../src/tools/agent.ts"
import { makeSkillTool } from "../src/tools/skill.ts"
import { WebSearchTool } from "../src/tools/websearch.ts"
import { fmt, time } from "./lib.ts"

const REPO = resolve(import.meta.dirname, "..")
const MCP_TOOLS = Number(process.env.BENCH_SCHEMA_MCP_TOOLS ?? 200)
const PROVIDERS: ReadonlyArray<Provider> = ["anthropic", "openai", "openai-strict", "gemini"]

/** Each tool's own entry in a provider's `tools` parameter. */
const entries = (provider: Provider, param: ReadonlyArray<unknown>): ReadonlyArray<unknown> =>
  provider === "gemini"
    ? ((param[0] as { functionDeclarations?: ReadonlyArray<unknown> } | undefined)?.functionDeclarations ?? [])
    : param

const system = (root: string, withMcp: boolean) =>
  Effect.gen(function* () {
    const layer = ToolSystem.layer({
      root,
      config: withMcp
        ? {
            mcpServers: {
              cat: {
                command: process.execPath,
                args: [join(REPO, "test/fixtures/mcp/catalogue.ts"), String(MCP_TOOLS)]
              }
            }
          }
        : {}
    })
    const context = yield* Layer.build(layer)
    yield* Context.get(context, McpClients).ready
    return context
  })

interface Measured {
  readonly declared: number
  readonly mcpDeclared: number
  readonly tokens: Readonly<Record<Provider, number>>
  readonly chars: number
}

/** The size of these tools declared to each provider. */
type Declared = Pick<Tool, "id" | "description" | "inputSchema" | "source">

const sizeOf = (declared: ReadonlyArray<Declared>): Measured => {
  const tokens = {} as Record<Provider, number>
  let chars = 0
  for (const provider of PROVIDERS) {
    const list = entries(
      provider,
      toolsParam(
        provider,
        declared.map((t) => ({ name: t.id, description: t.description, inputSchema: t.inputSchema }))
      )
    )
    tokens[provider] = list.reduce<number>((n, e) => n + countTokens(e), 0)
    if (provider === "anthropic") chars = list.reduce<number>((n, e) => n + JSON.stringify(e).length, 0)
  }
  return { declared: declared.length, mcpDeclared: declared.filter((t) => t.source === "mcp").length, tokens, chars }
}

const measure = (context: Parameters<typeof surfaceIn>[0], options: SurfaceOptions) =>
  Effect.map(surfaceIn(context, options).declared(), sizeOf)

/**
 * Three built-ins are registered only when they can work: websearch (a search API configured),
 * skill (skills found) and agent (an embedder's model). Declared too, they cost this much more
 * (skill's own part; each skill found adds its one-line description).
 */
const CONDITIONAL: ReadonlyArray<Declared> = [WebSearchTool, AgentTool, makeSkillTool([])]

const program = Effect.gen(function* () {
  const root = mkdtempSync(join(tmpdir(), "bench-schema-tax-"))
  yield* Effect.addFinalizer(() => Effect.sync(() => rmSync(root, { recursive: true, force: true })))
  const bare = yield* system(root, false)
  const withMcp = yield* system(root, true)

  const rows: Array<readonly [string, Measured]> = [
    ["all, built-ins only", yield* measure(bare, { surface: "all" })],
    [
      "all, built-ins + websearch, agent, skill",
      sizeOf([...(yield* surfaceIn(bare, { surface: "all" }).declared()), ...CONDITIONAL])
    ],
    [`all + ${MCP_TOOLS} MCP tools`, yield* measure(withMcp, { surface: "all" })],
    ["deferred (bridge), built-ins only", yield* measure(bare, { surface: "deferred" })],
    [`deferred (bridge) + ${MCP_TOOLS} MCP tools`, yield* measure(withMcp, { surface: "deferred" })],
    [
      `deferred (expand) + ${MCP_TOOLS} MCP tools, before a search`,
      yield* measure(withMcp, { surface: "deferred", strategy: "expand" })
    ],
    ["shell", yield* measure(bare, { surface: "shell" })]
  ]
  console.log(`\n### Schema tax (o200k_base tokens of each provider's tools parameter; chars of Anthropic's)\n`)
  console.log(`| surface | declared | of them MCP | ${PROVIDERS.join(" | ")} | chars |`)
  console.log(`| --- | --- | --- | ${PROVIDERS.map(() => "---").join(" | ")} | --- |`)
  for (const [name, m] of rows) {
    console.log(
      `| ${name} | ${m.declared} | ${m.mcpDeclared} | ${PROVIDERS.map((p) => m.tokens[p]).join(" | ")} | ${m.chars} |`
    )
  }

  const byName = new Map(rows)
  const max = (m: Measured) => Math.max(...PROVIDERS.map((p) => m.tokens[p]))
  const allBuiltins = max(byName.get("all, built-ins + websearch, agent, skill")!)
  const deferred = max(byName.get("deferred (bridge), built-ins only")!)
  const added = Math.max(
    ...PROVIDERS.map(
      (p) =>
        byName.get(`deferred (bridge) + ${MCP_TOOLS} MCP tools`)!.tokens[p] -
        byName.get("deferred (bridge), built-ins only")!.tokens[p]
    )
  )
  const check = (ok: boolean) => (ok ? "met" : "MISSED")
  console.log(`\n| target | measured (worst provider) | |\n| --- | --- | --- |`)
  console.log(
    `| all built-ins declared (websearch, agent, skill too) ≤ 4,000 tokens | ${allBuiltins} | ${check(allBuiltins <= 4000)} |`
  )
  console.log(`| deferred surface ≤ 600 tokens | ${deferred} | ${check(deferred <= 600)} |`)
  console.log(`| ${MCP_TOOLS} MCP tools add < 1,000 tokens under deferred | ${added} | ${check(added < 1000)} |`)

  // The price of deferring: one search to fetch schemas, paid once per tool.
  const surface = surfaceIn(withMcp, { surface: "deferred" })
  const queries = ["create github issue", "take a browser screenshot", "select:mcp__cat__filesystem_read_text_file"]
  console.log(
    `\n| tool_search over ${(yield* surface.searchable).length} tools | matches | result tokens | median | p90 |`
  )
  console.log("| --- | --- | --- | --- | --- |")
  for (const query of queries) {
    const call = { id: "q", name: "tool_search", args: { query } }
    const result = yield* surface.dispatch(call, { sessionId: "bench" })
    const timing = yield* Effect.promise(() =>
      time(query, 200, () => Effect.runPromise(surface.dispatch(call, { sessionId: "bench" })))
    )
    const matches = (result.metadata.matches as ReadonlyArray<string>).length
    console.log(
      `| \`${query}\` | ${matches} | ${countTokens(result.modelOutput)} | ${fmt(timing.medianMs)} | ${fmt(timing.p90Ms)} |`
    )
  }
})

await Effect.runPromise(Effect.scoped(program))
