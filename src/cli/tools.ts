/**
 * `freecode-tools tools`: the tools a session at a root would have, and what their
 * declarations cost in the prompt.
 */
import { Context, Effect, Option } from "effect"
import { Command } from "effect/cli"
import { McpClients } from "../mcp/clients.ts"
import type { Provider } from "../registry/provider.ts"
import { ToolRegistry } from "../registry/registry.ts"
import { wiringFor, wiringTable } from "../surface/models.ts"
import { definitionOf, ToolSurface } from "../surface/surface.ts"
import { plural } from "../text/plural.ts"
import { defaultSkillDirs, SKILL_DIRS_NAME, skillDirsConfig } from "../tools/skill.ts"
import { searchSetup } from "../web/search/config.ts"
import { declarationSize, o200kLayer, summarize, TOKEN_RULE } from "./estimate.ts"
import { json, profile, provider, systemFlags } from "./flags.ts"
import { Io } from "./io.ts"
import { autoDeferralNote, buildToolSystem, checkOptions } from "./system.ts"

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
const unavailableTools = Effect.fnUntraced(function* (
  context: Context.Context<ToolRegistry>,
  registered: ReadonlySet<string>,
  root: string
) {
  const out: Array<Unavailable> = []
  if (!registered.has("agent")) {
    out.push({
      id: "agent",
      reason:
        "no language model to run sub-agents: an embedder provides one (ToolSystem.layer({ agent: { model } })); the CLI has none"
    })
  }
  if (!registered.has("skill")) {
    const dirs = yield* skillDirsConfig(root).pipe(Effect.orElseSucceed(() => defaultSkillDirs(root)))
    out.push({ id: "skill", reason: `no SKILL.md found in ${dirs.join(", ")} (or set ${SKILL_DIRS_NAME})` })
  }
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

const table = (rows: ReadonlyArray<readonly [string, string, string, string]>): string => {
  const widths = [0, 1, 2].map((c) => Math.max(...rows.map((r) => r[c]!.length)))
  return rows
    .map(([name, chars, tokens, summary]) =>
      `${name.padEnd(widths[0]!)}  ${chars.padStart(widths[1]!)}  ${tokens.padStart(widths[2]!)}  ${summary}`.trimEnd()
    )
    .join("\n")
}

const sum = (values: ReadonlyArray<number>) => values.reduce((a, b) => a + b, 0)

export const toolsCommand = Command.make(
  "tools",
  { ...systemFlags, profile, provider, json },
  Effect.fn("cli.tools")(
    function* (input) {
      const io = yield* Io
      const setup = yield* checkOptions(input)
      const system = yield* buildToolSystem(setup)
      const surface = Context.get(system, ToolSurface)
      const registered = yield* Context.get(system, ToolRegistry).tools
      const unavailable = yield* unavailableTools(system, new Set(registered.map((t) => t.id)), setup.root)
      const tools = yield* surface.declared()
      const searchable = yield* surface.searchable
      const auto = yield* surface.autoDeferred

      // Sizes in --provider's dialect, else in the one --model is wired to.
      const provider = Option.isSome(input.provider)
        ? input.provider
        : Option.map(input.model, (m) => wiringFor(m, wiringTable(setup.models)).provider)
      if (Option.isSome(input.provider) && input.json) {
        return yield* io.out(`${JSON.stringify(yield* surface.toolsParam(input.provider.value), null, 2)}\n`)
      }

      const declarations = Option.isSome(provider)
        ? entriesOf(provider.value, yield* surface.toolsParam(provider.value))
        : tools.map(definitionOf)
      const sizes = yield* Effect.forEach(declarations, declarationSize)
      const total = { chars: sum(sizes.map((s) => s.chars)), tokens: sum(sizes.map((s) => s.tokens)) }

      if (input.json) {
        const out = {
          surface: surface.surface,
          ...(surface.surface === "deferred" ? { strategy: surface.strategy } : {}),
          tools: tools.map((t, i) => ({
            name: t.id,
            description: t.description,
            inputSchema: t.inputSchema,
            chars: sizes[i]!.chars,
            tokens: sizes[i]!.tokens,
            concurrencySafe: t.concurrencySafe,
            mutates: t.mutates,
            retrySafe: t.retrySafe,
            operations: t.operations
          })),
          totalChars: total.chars,
          totalTokens: total.tokens,
          searchable: searchable.map((t) => t.id),
          ...(auto === undefined ? {} : { autoDeferred: auto }),
          unavailable
        }
        return yield* io.out(`${JSON.stringify(out, null, 2)}\n`)
      }

      const shape = Option.isSome(provider)
        ? `${provider.value}'s tools parameter entry`
        : "{name, description, inputSchema}"
      const strategy = surface.surface === "deferred" ? `, strategy ${surface.strategy}` : ""
      const header = [
        `${plural(tools.length, "tool")} declared at ${setup.root} (surface ${surface.surface}${strategy}${setup.profile === undefined ? "" : `, profile ${setup.profile}`})`,
        `${TOKEN_RULE}, declaration shape: ${shape}`,
        ""
      ]
      const rows: Array<readonly [string, string, string, string]> = [
        ["TOOL", "CHARS", "TOKENS", "SUMMARY"],
        ...tools.map(
          (t, i) => [t.id, String(sizes[i]!.chars), String(sizes[i]!.tokens), summarize(t.description)] as const
        ),
        ["total", String(total.chars), String(total.tokens), ""]
      ]
      const deferredNote = auto === undefined ? "" : `\n${autoDeferralNote(auto)}`
      const found =
        searchable.length > 0
          ? [
              `\nfound through tool_search (not declared): ${plural(searchable.length, "tool")}: ${searchable.map((t) => t.id).join(", ")}`
            ]
          : []
      const missing = unavailable.map((u) => `not available: ${u.id}: ${u.reason}`)
      yield* io.out(
        `${header.join("\n")}\n${table(rows)}\n${deferredNote}${found.join("")}${found.length > 0 ? "\n" : ""}${missing.length > 0 ? `\n${missing.join("\n")}\n` : ""}`
      )
    },
    Effect.scoped,
    Effect.provide(o200kLayer)
  )
).pipe(
  Command.withDescription(
    "List the tools a session at --root would have declared under --surface, with a one-line summary and the size of each declaration in characters and tokens (o200k_base), plus the totals and the tools found through tool_search. With --provider, sizes are of that provider's entries; with --provider --json, print exactly that provider's `tools` request parameter."
  ),
  Command.withShortDescription("List declared tools and what their declarations cost")
)
