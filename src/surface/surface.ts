/**
 * Tool surfaces: what an agent is shown, wrapped around the Dispatcher every call goes through.
 *
 * - `all`: every tool the agent may use is declared.
 * - `deferred`: a small core plus `tool_search`; everything else (MCP tools included) is found
 *   through it. `bridge` adds `tool_call {name, arguments}`, so the declared list — and the
 *   prompt-cache prefix — never changes; `expand` appends what a search found to the declared
 *   list instead, after the unchanged prefix.
 * - `shell`: bash and output only.
 *
 * A surface only decides what is declared and what a name may reach. The call itself always goes
 * to the real target tool through the wrapped Dispatcher, so permissions, hooks, validation and
 * budgets run against that tool, and the result names it. Tools a policy would always refuse are
 * hidden everywhere (see visibility.ts).
 */
import { Clock, Context, Effect, Layer, Option, Result, Schema } from "effect"
import { ConfigError, FreecodeConfig } from "../config/load.ts"
import { Dispatcher, type DispatcherShape } from "../dispatch/dispatcher.ts"
import { runInBatches } from "../orchestrator/batching.ts"
import type { CallContext } from "../orchestrator/orchestrator.ts"
import { PermissionEngine, type Policy } from "../permission/engine.ts"
import { type Provider, type ToolDefinition, toolsParam } from "../registry/provider.ts"
import { ToolRegistry } from "../registry/registry.ts"
import { closestNames } from "../registry/suggest.ts"
import { dropStrictNulls } from "../schema/dialects/openai-strict.ts"
import { isRecord } from "../schema/json-schema.ts"
import { plural } from "../text/plural.ts"
import { fail } from "../tool/errors.ts"
import type { ToolCall, ToolResult, ToolStatus } from "../tool/result.ts"
import { defineTool, type Tool, type ToolOutput } from "../tool/tool.ts"
import { Workspace } from "../tool/workspace.ts"
import { rankTools, selectNames } from "./search.ts"
import { countTokens } from "./tokens.ts"
import { fromConfig, fromPolicy, isVisible, type Visibility } from "./visibility.ts"

export const SURFACE_NAMES = ["all", "deferred", "shell"] as const
export type SurfaceName = (typeof SURFACE_NAMES)[number]
export type DeferStrategy = "bridge" | "expand"

/** Always declared under `deferred` (when the agent may use them): enough to work without a search. */
export const DEFAULT_CORE: ReadonlyArray<string> = ["read", "bash"]
/** The whole `shell` surface. */
export const SHELL_TOOLS: ReadonlyArray<string> = ["bash", "output"]
export const SEARCH_TOOL = "tool_search"
export const CALL_TOOL = "tool_call"
const SEARCH_LIMIT = 5
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
  readonly root: string
}

export const definitionOf = (tool: Tool): ToolDefinition => ({
  name: tool.id,
  description: tool.description,
  inputSchema: tool.inputSchema
})

const SearchParams = Schema.Struct({
  query: Schema.String.annotate({
    description: 'What you want to do, e.g. "create github issue"; or "select:name1,name2".'
  }),
  limit: Schema.optionalKey(
    Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 20 })).annotate({
      description: `Most results (default ${SEARCH_LIMIT}).`
    })
  )
})

const CallParams = Schema.Struct({
  name: Schema.String.annotate({ description: "Its name." }),
  arguments: Schema.optionalKey(
    Schema.Record(Schema.String, Schema.Unknown).annotate({ description: "Its arguments, per its schema." })
  )
})

/** A result for something the surface answered itself (a search, or a name it does not reach). */
const localResult = (
  call: ToolCall,
  tool: string,
  status: ToolStatus,
  title: string,
  text: string,
  metadata: Record<string, unknown>,
  durationMs: number,
  tag = "ToolFailure"
): ToolResult => ({
  id: call.id,
  tool,
  status,
  title,
  modelOutput: text,
  uiOutput: text,
  outputChars: text.length,
  outputLines: text === "" ? 0 : text.split("\n").length,
  truncated: false,
  metadata,
  ...(status === "ok" ? {} : { error: { tag, message: text } }),
  attempts: status === "ok" ? 1 : 0,
  durationMs
})

const parseArgs = (raw: unknown): unknown => {
  if (typeof raw !== "string") return raw ?? {}
  try {
    return raw.trim() === "" ? {} : JSON.parse(raw)
  } catch {
    return raw
  }
}

export const surfaced = (deps: SurfaceDeps, options: SurfaceOptions): SurfacedDispatcher => {
  const { dispatcher, registry, policies } = deps
  const strategy = options.strategy ?? "bridge"
  const core = new Set((options.core ?? DEFAULT_CORE).map((n) => n.toLowerCase()))
  const shell = new Set(SHELL_TOOLS)
  // Tools a session found (expand: declared after the prefix; bridge: callable by name too).
  const discovered = new Map<string, Array<string>>()
  const found = (sessionId: string) => discovered.get(sessionId) ?? []
  const discover = (sessionId: string, ids: ReadonlyArray<string>) => {
    const list = discovered.get(sessionId) ?? []
    for (const id of ids) if (!list.includes(id)) list.push(id)
    discovered.set(sessionId, list)
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
    const tools = all.filter((t) => isVisible(t, policies) && !excluded.has(t.id.toLowerCase()))
    const ids = (pick: (t: Tool) => boolean) => new Set(tools.filter(pick).map((t) => t.id))
    if (options.surface === "deferred") {
      return { tools, deferred: ids((t) => !core.has(t.id.toLowerCase())), auto: undefined }
    }
    if (options.surface === "shell") return { tools, deferred: undefined, auto: undefined }
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

  const searchTool = defineTool({
    id: SEARCH_TOOL,
    description: `Find more tools by what they do, or load some by name with "select:a,b". Returns their schemas; ${
      strategy === "bridge" ? "run one with tool_call." : "then call them directly."
    }`,
    parameters: SearchParams,
    concurrencySafe: true,
    retrySafe: true,
    permissions: { operations: ["session.read"] },
    execute: (args, ctx) =>
      Effect.gen(function* () {
        const pool = yield* searchable
        const names = selectNames(args.query)
        let matches: ReadonlyArray<Tool>
        const notes: Array<string> = []
        if (names !== undefined) {
          if (names.length === 0) {
            return yield* Effect.fail(fail('select: needs names, e.g. "select:mcp__github__create_issue,read".'))
          }
          const byName = new Map(pool.map((t) => [t.id.toLowerCase(), t]))
          const declaredNow = new Set((yield* declared(ctx.sessionId)).map((t) => t.id.toLowerCase()))
          const picked: Array<Tool> = []
          for (const name of names) {
            const tool = byName.get(name.toLowerCase())
            if (tool !== undefined) {
              if (!picked.includes(tool)) picked.push(tool)
            } else if (declaredNow.has(name.toLowerCase())) {
              notes.push(`${name} is already declared: call it directly.`)
            } else {
              const close = closestNames(
                name,
                pool.map((t) => t.id)
              )
              notes.push(
                `No tool named "${name}".${close.length > 0 ? ` Did you mean ${close.map((c) => `"${c}"`).join(" or ")}?` : ""}`
              )
            }
          }
          matches = picked
        } else {
          matches = rankTools(args.query, pool, args.limit ?? SEARCH_LIMIT)
          if (matches.length === 0) {
            notes.push(
              `No tool matches "${args.query}" (${plural(pool.length, "tool")} can be searched). Try other words for the action or the service, or do it with the declared tools.`
            )
          }
        }
        discover(
          ctx.sessionId,
          matches.map((t) => t.id)
        )
        const how =
          strategy === "bridge"
            ? `Run one with ${CALL_TOOL} {"name": "<name>", "arguments": {…}}.`
            : "They are now declared: call them directly."
        const lines = matches.map((t) =>
          JSON.stringify({ name: t.id, description: t.description, input_schema: t.inputSchema })
        )
        const head =
          matches.length > 0 ? [`${matches.length} tool${matches.length === 1 ? "" : "s"} found. ${how}`] : []
        const output: ToolOutput = {
          title: `tool_search ${args.query}: ${matches.length} found`,
          output: [...head, ...lines, ...notes].join("\n"),
          metadata: { matches: matches.map((t) => t.id) }
        }
        return output
      })
  })

  const callTool = defineTool({
    id: CALL_TOOL,
    description: "Run a tool found with tool_search.",
    parameters: CallParams,
    // The surface answers tool_call itself (runBridge); a registry never holds this tool.
    execute: () => Effect.fail(fail(`${CALL_TOOL} runs only through a surfaced Dispatcher.`))
  })

  /** The declared list: fixed prefix first, then (expand) what this session found. */
  const declared = (sessionId?: string): Effect.Effect<ReadonlyArray<Tool>> =>
    Effect.map(view, (v) => {
      const { tools } = v
      if (options.surface === "shell") return tools.filter((t) => shell.has(t.id))
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
   * Why this surface does not reach `tool`, or undefined when it does. A deferred tool called by
   * name before any search runs (the model knew it, e.g. from an `output` marker) and is loaded:
   * running it beats refusing a call that would pass every check.
   */
  const unreachable = (v: View, tool: Tool, sessionId: string): string | undefined => {
    if (!isVisible(tool, policies)) return undefined // the dispatcher refuses it with the policy's reason
    if (options.surface === "shell" && !shell.has(tool.id)) {
      return `Only bash and output are available here. Do this with a bash command instead (cat, ls, rg, sed, curl, …).`
    }
    if (isDeferred(v, tool)) discover(sessionId, [tool.id])
    return undefined
  }

  const elapsedSince = (started: number) => Effect.map(Clock.currentTimeMillis, (now) => now - started)

  const runSearch = (call: ToolCall, context: CallContext) =>
    Effect.gen(function* () {
      const started = yield* Clock.currentTimeMillis
      const decoded = searchTool.decode(parseArgs(call.args))
      if (Result.isFailure(decoded)) {
        return localResult(
          call,
          SEARCH_TOOL,
          "error",
          `${SEARCH_TOOL}: InvalidArguments`,
          decoded.failure.message,
          {},
          yield* elapsedSince(started),
          "InvalidArguments"
        )
      }
      const ctx = {
        sessionId: context.sessionId,
        callId: call.id,
        root: deps.root,
        canSeeImages: context.canSeeImages ?? false,
        emit: () => Effect.void
      }
      const out = yield* Effect.result(searchTool.execute(decoded.success, ctx))
      const ms = yield* elapsedSince(started)
      return Result.isSuccess(out)
        ? localResult(call, SEARCH_TOOL, "ok", out.success.title, out.success.output, out.success.metadata ?? {}, ms)
        : localResult(call, SEARCH_TOOL, "error", `${SEARCH_TOOL}: ToolFailure`, out.failure.message, {}, ms)
    })

  const runBridge = (call: ToolCall, context: CallContext) =>
    Effect.gen(function* () {
      const started = yield* Clock.currentTimeMillis
      const raw = parseArgs(call.args)
      // Models sometimes send the inner arguments as a JSON string; accept that.
      const input =
        isRecord(raw) && typeof raw.arguments === "string" ? { ...raw, arguments: parseArgs(raw.arguments) } : raw
      const decoded = callTool.decode(input)
      if (Result.isFailure(decoded)) {
        return localResult(
          call,
          CALL_TOOL,
          "error",
          `${CALL_TOOL}: InvalidArguments`,
          decoded.failure.message,
          {},
          yield* elapsedSince(started),
          "InvalidArguments"
        )
      }
      const { name, arguments: args } = decoded.success as typeof CallParams.Type
      if (name.toLowerCase() === SEARCH_TOOL || name.toLowerCase() === CALL_TOOL) {
        return localResult(
          call,
          CALL_TOOL,
          "error",
          `${CALL_TOOL}: InvalidArguments`,
          `Call ${name} directly, not through ${CALL_TOOL}.`,
          {},
          yield* elapsedSince(started),
          "InvalidArguments"
        )
      }
      const target = yield* Effect.option(registry.resolve(name))
      // The model evidently knows the tool's schema: calling it through the bridge loads it.
      if (Option.isSome(target) && isVisible(target.value, policies)) discover(context.sessionId, [target.value.id])
      const inner = Option.isSome(target) ? dropStrictNulls(target.value.inputSchema, args ?? {}) : (args ?? {})
      const result = yield* dispatcher.dispatch({ id: call.id, name, args: inner }, context)
      return { ...result, metadata: { ...result.metadata, via: CALL_TOOL } }
    })

  /** Whether a null is anywhere in the arguments (most calls have none: nothing to drop). */
  const hasNull = (value: unknown): boolean =>
    value === null ||
    (Array.isArray(value) ? value.some(hasNull) : isRecord(value) ? Object.values(value).some(hasNull) : false)

  // (One suspended step, not a generator: every call passes through here.)
  const dispatch = (call: ToolCall, context: CallContext): Effect.Effect<ToolResult> =>
    Effect.suspend(() => {
      const v = viewNow()
      const name = call.name.toLowerCase()
      const deferring = v.deferred !== undefined
      if (deferring && name === SEARCH_TOOL) return runSearch(call, context)
      if (deferring && strategy === "bridge" && name === CALL_TOOL) return runBridge(call, context)
      const tool = registry.lookup(call.name)
      if (tool === undefined) return dispatcher.dispatch(call, context)
      const why = unreachable(v, tool, context.sessionId)
      if (why !== undefined) {
        return Effect.succeed(
          localResult(call, tool.id, "error", `${tool.id}: not declared`, why, { surface: options.surface }, 0)
        )
      }
      // A strict-mode model sends null for an optional argument it leaves out: that means absent.
      const args = parseArgs(call.args)
      if (!isRecord(args) || !hasNull(args)) return dispatcher.dispatch(call, context)
      return dispatcher.dispatch({ ...call, args: dropStrictNulls(tool.inputSchema, args) }, context)
    })

  const concurrencySafe = (tools: ReadonlyArray<Tool>, deferring: boolean) => {
    const safe = new Map(tools.map((t) => [t.id.toLowerCase(), t.concurrencySafe]))
    return (call: ToolCall): boolean => {
      const name = call.name.toLowerCase()
      if (deferring && name === SEARCH_TOOL) return true
      if (deferring && strategy === "bridge" && name === CALL_TOOL) {
        const args = parseArgs(call.args)
        return isRecord(args) && typeof args.name === "string" && (safe.get(args.name.toLowerCase()) ?? false)
      }
      return safe.get(name) ?? false
    }
  }

  const dispatchBatch = (calls: ReadonlyArray<ToolCall>, context: CallContext) =>
    Effect.gen(function* () {
      const v = yield* view
      const safe = concurrencySafe(yield* registry.tools, v.deferred !== undefined)
      return yield* runInBatches(calls, safe, (call) => dispatch(call, context))
    })

  return {
    surface: options.surface,
    strategy,
    dispatch,
    dispatchBatch,
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
        return surfaced({ ...deps, dispatcher: narrowed, policies: [...policies, fromPolicy(policy)] }, options)
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
  const workspace = Context.getOption(context, Workspace)
  return surfaced(
    {
      dispatcher: Context.get(context, Dispatcher),
      registry: Context.get(context, ToolRegistry),
      policies: [fromConfig(Option.getOrUndefined(config))],
      resolveProfile: Option.isSome(engine)
        ? engine.value.profile
        : (name) => Effect.fail(new ConfigError({ message: `no permission engine to resolve the profile ${name}` })),
      root: Option.match(workspace, { onNone: () => process.cwd(), onSome: (w) => w.root })
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
