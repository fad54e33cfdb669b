/**
 * Tool surfaces: what an agent is shown, wrapped around the Dispatcher every call goes through.
 *
 * - `all`: every tool the agent may use is declared.
 * - `deferred`: a small core plus `tool_search`; everything else (MCP tools included) is found
 *   through it. `bridge` adds `tool_call {name, arguments}`, so the declared list — and the
 *   prompt-cache prefix — never changes; `expand` appends what a search found to the declared
 *   list instead, after the unchanged prefix.
 * - `shell`: bash and output only.
 * - `code`: the program tool (`code`) and output only; every other tool is reached from inside a
 *   program, through the same Dispatcher (docs/code-mode.md).
 *
 * A surface only decides what is declared and what a name may reach. The call itself always goes
 * to the real target tool through the wrapped Dispatcher, so permissions, hooks, validation and
 * budgets run against that tool, and the result names it. Tools a policy would always refuse are
 * hidden everywhere (see visibility.ts).
 */
import { Context, Effect, Layer, Option, Result } from "effect"
import { ConfigError, FreecodeConfig } from "../config/load.ts"
import { Dispatcher, type DispatcherShape } from "../dispatch/dispatcher.ts"
import { runInBatches } from "../orchestrator/batching.ts"
import type { CallContext, Catalog } from "../orchestrator/orchestrator.ts"
import { parseArgs } from "../orchestrator/prepare.ts"
import { PermissionEngine, type Policy } from "../permission/engine.ts"
import { type Provider, type ToolDefinition, toolsParam } from "../registry/provider.ts"
import { ToolRegistry } from "../registry/registry.ts"
import { DEFAULT_MAX_SESSIONS, makeSessions, type SessionSlot, Sessions } from "../session/sessions.ts"
import { fail } from "../tool/errors.ts"
import { describedFor } from "../tool/reach.ts"
import type { ToolCall, ToolResult } from "../tool/result.ts"
import type { Tool } from "../tool/tool.ts"
import { CALL_TOOL, callTool, searchTool as makeSearchTool, SEARCH_TOOL } from "./bridge.ts"
import { countTokens } from "./tokens.ts"
import { fromConfig, isVisible, type Visibility } from "./visibility.ts"

export { CALL_TOOL, SEARCH_TOOL } from "./bridge.ts"

export const SURFACE_NAMES = ["all", "deferred", "shell", "code"] as const
export type SurfaceName = (typeof SURFACE_NAMES)[number]
export type DeferStrategy = "bridge" | "expand"

/** Always declared under `deferred` (when the agent may use them): enough to work without a search. */
export const DEFAULT_CORE: ReadonlyArray<string> = ["read", "bash"]
/** The whole `shell` surface. */
export const SHELL_TOOLS: ReadonlyArray<string> = ["bash", "output"]
/** The whole `code` surface. */
export const CODE_TOOLS: ReadonlyArray<string> = ["code", "output"]
/** The CLI's auto-deferral threshold: past it, `--surface all` defers MCP tools (0 turns it off). */
export const AUTO_DEFER_NAME = "FREECODE_AUTO_DEFER_TOKENS"
export const DEFAULT_AUTO_DEFER_TOKENS = 10_000

export interface SurfaceOptions {
  readonly surface: SurfaceName
  /** `deferred` only; default `bridge`. */
  readonly strategy?: DeferStrategy
  /** `deferred` only: tool ids always declared; default DEFAULT_CORE. */
  readonly core?: ReadonlyArray<string>
  /**
   * `all` only: tools that are not declared but found through tool_search, as under
   * `deferred` (with `tool_search` and, under bridge, `tool_call` declared after the others).
   */
  readonly defer?: (tool: Tool) => boolean
  /**
   * `all` only: when every declaration together would exceed this many tokens (o200k_base),
   * MCP tools are deferred as with `defer`. Undefined: never.
   */
  readonly autoDeferTokens?: number
  /** Tools neither declared nor searchable (per-model wiring hides the edit tool a model was not trained on). */
  readonly exclude?: ReadonlyArray<string>
}

/** What was deferred automatically, and why. */
export interface AutoDeferral {
  /** Tokens all declarations would cost. */
  readonly tokens: number
  readonly threshold: number
  readonly deferred: number
}

export interface SurfacedDispatcher extends DispatcherShape {
  readonly surface: SurfaceName
  readonly strategy: DeferStrategy
  /** The tools declared to the model in this session, in declaration order. */
  readonly declared: (sessionId?: string) => Effect.Effect<ReadonlyArray<Tool>>
  /** Tools the agent may use that are not declared up front: what tool_search searches. */
  readonly searchable: Effect.Effect<ReadonlyArray<Tool>>
  /** Set when MCP tools are deferred because declaring them would cross `autoDeferTokens`. */
  readonly autoDeferred: Effect.Effect<AutoDeferral | undefined>
  /** The declared list as a provider's `tools` request parameter. */
  readonly toolsParam: (provider: Provider, sessionId?: string) => Effect.Effect<ReadonlyArray<unknown>>
  readonly withProfile: (profile: string | Policy) => Effect.Effect<SurfacedDispatcher, ConfigError>
}

/** The surfaced Dispatcher of a tool system, for what lists declarations (the CLI's `tools`). */
export class ToolSurface extends Context.Service<ToolSurface, SurfacedDispatcher>()("freecode/ToolSurface") {}

export interface SurfaceDeps {
  /** The dispatcher calls go through, already narrowed by `policies`' profiles. */
  readonly dispatcher: DispatcherShape
  readonly registry: ToolRegistry["Service"]
  /** The project's policy and each profile's, for hiding tools. */
  readonly policies: ReadonlyArray<Visibility>
  /** A profile by name (the permission engine's), for withProfile. */
  readonly resolveProfile: (name: string) => Effect.Effect<Policy, ConfigError>
  /** Tools each session found, held by the system's Sessions (shared by the profiles' surfaces). */
  readonly discovered?: SessionSlot<Array<string>>
}

export const definitionOf = (tool: Tool): ToolDefinition => ({
  name: tool.id,
  description: tool.description,
  inputSchema: tool.inputSchema
})

export const surfaced = (deps: SurfaceDeps, options: SurfaceOptions): SurfacedDispatcher => {
  const { dispatcher, registry, policies } = deps
  const strategy = options.strategy ?? "bridge"
  const core = new Set((options.core ?? DEFAULT_CORE).map((n) => n.toLowerCase()))
  // The tools a narrow surface declares (shell, code); undefined: no such limit.
  const only =
    options.surface === "shell" ? new Set(SHELL_TOOLS) : options.surface === "code" ? new Set(CODE_TOOLS) : undefined
  // Tools a session found (expand: declared after the prefix; bridge: callable by name too).
  const discovered =
    deps.discovered ?? makeSessions({ maxSessions: DEFAULT_MAX_SESSIONS }).slot<Array<string>>("discovered")
  const found = (sessionId: string) => discovered.get(sessionId) ?? []
  const discover = (sessionId: string, ids: ReadonlyArray<string>) => {
    const list = discovered.getOrCreate(sessionId, () => [])
    for (const id of ids) if (!list.includes(id)) list.push(id)
  }

  const excluded = new Set((options.exclude ?? []).map((n) => n.toLowerCase()))

  /** What the surface shows for one version of the registry's list (cached per version). */
  interface View {
    /** Every tool the agent may use, in the registry's stable order. */
    readonly tools: ReadonlyArray<Tool>
    /** Ids found through tool_search instead of declared; undefined when nothing is deferred. */
    readonly deferred: ReadonlySet<string> | undefined
    readonly auto: AutoDeferral | undefined
  }
  const views = new WeakMap<ReadonlyArray<Tool>, View>()
  const makeView = (all: ReadonlyArray<Tool>): View => {
    const visible = all.filter((t) => isVisible(t, policies) && !excluded.has(t.id.toLowerCase()))
    const tools = describedFor(visible, visible)
    const ids = (pick: (t: Tool) => boolean) => new Set(tools.filter(pick).map((t) => t.id))
    if (options.surface === "deferred") {
      return { tools, deferred: ids((t) => !core.has(t.id.toLowerCase())), auto: undefined }
    }
    if (only !== undefined) return { tools, deferred: undefined, auto: undefined }
    if (options.defer !== undefined) return { tools, deferred: ids(options.defer), auto: undefined }
    const threshold = options.autoDeferTokens
    const mcp = tools.filter((t) => t.source === "mcp")
    if (threshold === undefined || mcp.length === 0) return { tools, deferred: undefined, auto: undefined }
    const tokens = tools.reduce((n, t) => n + countTokens(definitionOf(t)), 0)
    return tokens <= threshold
      ? { tools, deferred: undefined, auto: undefined }
      : { tools, deferred: ids((t) => t.source === "mcp"), auto: { tokens, threshold, deferred: mcp.length } }
  }
  /** The view of the registry's tools as they are now (made once per set of tools). */
  const viewNow = (): View => {
    const all = registry.toolsNow()
    const cached = views.get(all)
    if (cached !== undefined) return cached
    const made = makeView(all)
    views.set(all, made)
    return made
  }
  const view: Effect.Effect<View> = Effect.sync(viewNow)
  const isDeferred = (v: View, tool: Tool) => v.deferred?.has(tool.id) ?? false

  const searchable = Effect.map(view, (v) => v.tools.filter((t) => isDeferred(v, t)))

  const searchTool = makeSearchTool({
    strategy,
    pool: searchable,
    declared: (sessionId) => declared(sessionId),
    discover
  })

  /** The declared list: fixed prefix first, then (expand) what this session found. */
  const declared = (sessionId?: string): Effect.Effect<ReadonlyArray<Tool>> =>
    Effect.map(view, (v) => {
      const { tools } = v
      if (only !== undefined) return tools.filter((t) => only.has(t.id))
      if (v.deferred === undefined) return tools
      // deferred, or `all` deferring some: the tools not deferred are the core
      const prefix = [
        ...tools.filter((t) => !isDeferred(v, t)),
        searchTool,
        ...(strategy === "bridge" ? [callTool] : [])
      ]
      if (strategy === "bridge" || sessionId === undefined) return prefix
      const byId = new Map(tools.map((t) => [t.id, t]))
      const extra = found(sessionId).flatMap((id) => {
        const t = byId.get(id)
        return t === undefined || !isDeferred(v, t) ? [] : [t]
      })
      return [...prefix, ...extra]
    })

  /**
   * Where names resolve under this surface. tool_search and tool_call exist while something is
   * deferred; a tool outside the `shell` surface is unreachable. A deferred tool called by name
   * before any search runs (the model knew it, e.g. from an `output` marker) and is loaded:
   * running it beats refusing a call that would pass every check. A tool the policies hide
   * resolves too, and the rules refuse it with their reason.
   */
  const catalog: Catalog = {
    find: (name, sessionId) => {
      const v = viewNow()
      const lower = name.toLowerCase()
      if (v.deferred !== undefined && lower === SEARCH_TOOL) return searchTool
      if (v.deferred !== undefined && strategy === "bridge" && lower === CALL_TOOL) return callTool
      const tool = registry.lookup(name)
      if (tool === undefined || !isVisible(tool, policies)) return tool
      if (only !== undefined && !only.has(tool.id)) {
        return {
          _tag: "Unreachable",
          tool: tool.id,
          error: fail(
            options.surface === "code"
              ? `Only code and output are available here. Call ${tool.id} from a program instead: code {"program": "const r = await tools.${tool.id}({...}); console.log(r.output)"}.`
              : "Only bash and output are available here. Do this with a bash command instead (cat, ls, rg, sed, curl, …)."
          ),
          metadata: { surface: options.surface }
        }
      }
      if (isDeferred(v, tool)) discover(sessionId, [tool.id])
      return tool
    },
    names: () => registry.toolsNow().map((t) => t.id),
    strictNulls: true
  }

  const dispatch = (call: ToolCall, context: CallContext): Effect.Effect<ToolResult> =>
    dispatcher.dispatchIn(catalog, call, context)

  const concurrencySafe = (tools: ReadonlyArray<Tool>, deferring: boolean) => {
    const safe = new Map(tools.map((t) => [t.id.toLowerCase(), t.concurrencySafe]))
    return (call: ToolCall): boolean => {
      const name = call.name.toLowerCase()
      if (deferring && name === SEARCH_TOOL) return true
      if (deferring && strategy === "bridge" && name === CALL_TOOL) {
        const args = parseArgs(CALL_TOOL, call.args)
        const target = Result.isSuccess(args) ? args.success.name : undefined
        return typeof target === "string" && (safe.get(target.toLowerCase()) ?? false)
      }
      return safe.get(name) ?? false
    }
  }

  const dispatchBatch = Effect.fnUntraced(function* (calls: ReadonlyArray<ToolCall>, context: CallContext) {
    const v = yield* view
    const safe = concurrencySafe(yield* registry.tools, v.deferred !== undefined)
    return yield* runInBatches(calls, safe, (call) => dispatch(call, context))
  })

  return {
    surface: options.surface,
    strategy,
    dispatch,
    dispatchIn: dispatcher.dispatchIn,
    dispatchBatch,
    chain: dispatcher.chain,
    declared,
    searchable,
    autoDeferred: Effect.map(view, (v) => v.auto),
    tools: declared(),
    toolsParam: (provider, sessionId) =>
      Effect.map(declared(sessionId), (tools) => toolsParam(provider, tools.map(definitionOf))),
    withProfile: (profile) =>
      Effect.gen(function* () {
        const policy = typeof profile === "string" ? yield* deps.resolveProfile(profile) : profile
        const narrowed = yield* dispatcher.withProfile(policy)
        return surfaced({ ...deps, dispatcher: narrowed, policies: [...policies, policy], discovered }, options)
      })
  }
}

/**
 * The Dispatcher in `context` under a surface, with the project's policy hiding what it always
 * denies. Services a trimmed-down system lacks are done without: no config hides nothing, and
 * without a permission engine no profile can be named.
 */
export const surfaceIn = (
  context: Context.Context<Dispatcher | ToolRegistry>,
  options: SurfaceOptions
): SurfacedDispatcher => {
  const engine = Context.getOption(context, PermissionEngine)
  const config = Context.getOption(context, FreecodeConfig)
  const dispatcher = Context.get(context, Dispatcher)
  const sessions = Context.getOption(context, Sessions)
  return surfaced(
    {
      dispatcher,
      ...(Option.isSome(sessions) ? { discovered: sessions.value.slot<Array<string>>("discovered") } : {}),
      registry: Context.get(context, ToolRegistry),
      // The engine's own policies when there is one: the surface hides what it always refuses.
      policies: Option.isSome(engine)
        ? [engine.value.project, ...dispatcher.chain]
        : [fromConfig(Option.getOrUndefined(config))],
      resolveProfile: Option.isSome(engine)
        ? engine.value.profile
        : (name) => Effect.fail(new ConfigError({ message: `no permission engine to resolve the profile ${name}` }))
    },
    options
  )
}

/** The same, from the services in the environment (the system's Dispatcher and registry). */
export const makeSurface = (
  options: SurfaceOptions
): Effect.Effect<SurfacedDispatcher, never, Dispatcher | ToolRegistry> =>
  Effect.map(Effect.context<Dispatcher | ToolRegistry>(), (context) => surfaceIn(context, options))

/**
 * The system's Dispatcher under a surface, as a layer: it replaces the Dispatcher (so the
 * declared list, `tools`, and every call go through the surface) and is the ToolSurface (what
 * the MCP server lists). The ToolRegistry stays the whole catalogue the surface chooses from.
 */
export const surfaceLayer = (
  options: SurfaceOptions
): Layer.Layer<Dispatcher | ToolSurface, never, Dispatcher | ToolRegistry> =>
  Layer.effectContext(
    Effect.map(makeSurface(options), (surface) =>
      Context.make(Dispatcher, surface as DispatcherShape).pipe(Context.add(ToolSurface, surface))
    )
  )
