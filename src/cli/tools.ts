/**
 * `freecode-tools tools`: the tools a session at a root would have, and what their
 * declarations cost in the prompt.
 */
import { Context, Effect, Option } from "effect"
import { Command } from "effect/cli"
import { McpClients } from "../mcp/clients.ts"
import type { Provider } from "../registry/provider.ts"
import { ToolRegistry } from "../registry/registry.ts"
import { searchSetup } from "../web/search/config.ts"
import { ESTIMATE_RULE, estimateTokens, summarize } from "./estimate.ts"
import { json, provider, systemFlags } from "./flags.ts"
import { Io } from "./io.ts"
import { buildToolSystem, checkOptions } from "./system.ts"

/** Each tool's own entry in a provider's `tools` parameter, in registry order. */
const entriesOf = (provider: Provider, param: ReadonlyArray<unknown>): ReadonlyArray<unknown> => {
  if (provider !== "gemini") return param
  const first = param[0] as { readonly functionDeclarations?: ReadonlyArray<unknown> } | undefined
  return first?.functionDeclarations ?? []
}

interface Unavailable {
  readonly id: string
  readonly reason: string
}

/**
 * What a person would expect in the list but will not find, and why: websearch without a
 * configured search API, MCP servers that failed to start, MCP tools whose schema was broken.
 */
const unavailableTools = (context: Context.Context<ToolRegistry>, registered: ReadonlySet<string>) =>
  Effect.gen(function* () {
    const out: Array<Unavailable> = []
    const search = yield* searchSetup
    if (!registered.has("websearch") && search._tag === "NotConfigured")
      out.push({ id: "websearch", reason: search.reason })
    const mcp = Context.getOption(context, McpClients)
    for (const server of Option.isSome(mcp) ? yield* mcp.value.status : []) {
      if (server.state === "failed") {
        const stderr =
          server.stderr.trim() === "" ? "" : ` (stderr: ${server.stderr.trim().split("\n").slice(-2).join(" | ")})`
        out.push({ id: `mcp server ${server.name}`, reason: `${server.error ?? "failed to start"}${stderr}` })
      }
      for (const skipped of server.skipped) out.push({ id: `${server.name}/${skipped.name}`, reason: skipped.reason })
    }
    return out
  })

const table = (rows: ReadonlyArray<readonly [string, string, string]>): string => {
  const widths = [0, 1].map((c) => Math.max(...rows.map((r) => r[c]!.length)))
  return rows
    .map(([name, tokens, summary]) =>
      `${name.padEnd(widths[0]!)}  ${tokens.padStart(widths[1]!)}  ${summary}`.trimEnd()
    )
    .join("\n")
}

export const toolsCommand = Command.make(
  "tools",
  { ...systemFlags, provider, json },
  Effect.fn("cli.tools")(function* (input) {
    const io = yield* Io
    const setup = yield* checkOptions(input)
    const system = yield* buildToolSystem(setup)
    const registry = Context.get(system, ToolRegistry)
    const tools = yield* registry.tools
    const unavailable = yield* unavailableTools(system, new Set(tools.map((t) => t.id)))

    if (Option.isSome(input.provider) && input.json) {
      return yield* io.out(`${JSON.stringify(yield* registry.toolsParam(input.provider.value), null, 2)}\n`)
    }

    const declarations = Option.isSome(input.provider)
      ? entriesOf(input.provider.value, yield* registry.toolsParam(input.provider.value))
      : yield* registry.definitions
    const estimates = tools.map((_, i) => estimateTokens(declarations[i]))
    const total = estimates.reduce((a, b) => a + b, 0)

    if (input.json) {
      const out = {
        tools: tools.map((t, i) => ({
          name: t.id,
          description: t.description,
          inputSchema: t.inputSchema,
          estimatedTokens: estimates[i]!,
          concurrencySafe: t.concurrencySafe,
          mutates: t.mutates,
          retrySafe: t.retrySafe,
          operations: t.operations
        })),
        totalEstimatedTokens: total,
        unavailable
      }
      return yield* io.out(`${JSON.stringify(out, null, 2)}\n`)
    }

    const shape = Option.isSome(input.provider)
      ? `${input.provider.value}'s tools parameter entry`
      : "{name, description, inputSchema}"
    const header = [
      `${tools.length} tools at ${setup.root} (surface ${input.surface})`,
      `${ESTIMATE_RULE}, declaration shape: ${shape}`,
      ""
    ]
    const rows: Array<readonly [string, string, string]> = [
      ["TOOL", "TOKENS", "SUMMARY"],
      ...tools.map((t, i) => [t.id, String(estimates[i]!), summarize(t.description)] as const),
      ["total", String(total), ""]
    ]
    const missing = unavailable.map((u) => `not available: ${u.id}: ${u.reason}`)
    yield* io.out(`${header.join("\n")}\n${table(rows)}\n${missing.length > 0 ? `\n${missing.join("\n")}\n` : ""}`)
  }, Effect.scoped)
).pipe(
  Command.withDescription(
    "List the tools a session at --root would have, with a one-line summary and the estimated token cost of each declaration (ceil(JSON chars / 4)), plus the total. With --provider --json, print exactly that provider's `tools` request parameter."
  ),
  Command.withShortDescription("List tools and what their declarations cost")
)
