/**
 * Composes the services into one tool system. Each piece is its own layer, and each default is
 * built only when the context does not already hold that service (overridable.ts): an embedder
 * or a test swaps one (its own Approval, an OutputStore, an in-memory file system) by providing
 * it to the system, and every service that uses it gets that one.
 */
import { type Config, Effect, Layer } from "effect"
import type { LanguageModel } from "effect/ai"
import { type RunnerOptions, SubagentRunner } from "../src/agent/runner.ts"
import { FreecodeConfig, sectionOf } from "../src/config/load.ts"
import { Dispatcher } from "../src/dispatch/dispatcher.ts"
import { WriteFs } from "../src/edit/write-fs.ts"
import { ToolEvents } from "../src/events/events.ts"
import { LocalFs } from "../src/fs/local-fs.ts"
import { type FunctionHook, Hooks } from "../src/hooks/hooks.ts"
import { Jobs } from "../src/jobs/jobs.ts"
import { LspClients } from "../src/lsp/service.ts"
import { McpClients } from "../src/mcp/clients.ts"
import { CallPath } from "../src/orchestrator/call-path.ts"
import { Orchestrator } from "../src/orchestrator/orchestrator.ts"
import { type InvalidSetting, OutputConfig, type OutputSettings } from "../src/output/config.ts"
import { HistoryBudget } from "../src/output/history-budget.ts"
import { OutputStore } from "../src/output/store.ts"
import { layerSqliteOutputStore } from "../src/output/store-sqlite.ts"
import { Approval } from "../src/permission/approval.ts"
import { layerApprovalFromSource } from "../src/permission/approval-prompter.ts"
import { permissionsSection } from "../src/permission/config.ts"
import { PermissionEngine } from "../src/permission/engine.ts"
import { Prompter } from "../src/prompt/prompter.ts"
import { ReadState } from "../src/read-state/read-state.ts"
import { ToolRegistry } from "../src/registry/registry.ts"
import { Sandbox, SandboxByDefault } from "../src/sandbox/sandbox.ts"
import { resolveSandboxSettings, sandboxSection } from "../src/sandbox/settings.ts"
import { GrantStore } from "../src/session/grants.ts"
import { JobRecordStore } from "../src/session/job-records.ts"
import { MemoryFolder } from "../src/session/memory-folder.ts"
import { Sessions } from "../src/session/sessions.ts"
import { SessionPersistence, SessionStore, type SessionStoreOptions } from "../src/session/store.ts"
import { TodoStore } from "../src/session/todos.ts"
import type { StoreUnavailable } from "../src/sql/connect.ts"
import { type SharedStateOptions, SharedStoreSetting, sharedStateLayer } from "../src/state/layer.ts"
import { type SurfaceOptions, surfaceLayer } from "../src/surface/surface.ts"
import type { Tool } from "../src/tool/tool.ts"
import { Workspace } from "../src/tool/workspace.ts"
import { agentLayer } from "../src/tools/agent.ts"
import { type CodeToolOptions, codeLayer } from "../src/tools/code.ts"
import { type BuiltinRequirements, builtinTools } from "../src/tools/index.ts"
import { CurrentSearchBackend } from "../src/tools/search/auto.ts"
import { searchIndexLayer } from "../src/tools/search/indexed.ts"
import { skillLayer } from "../src/tools/skill.ts"
import { webSearchLayer } from "../src/tools/websearch.ts"
import { WebNetwork } from "../src/web/network.ts"
import { CONFIG_SECTIONS, checkConfigTools, type FreecodeConfigData } from "./config.ts"
import { overridable, overridableReference } from "./overridable.ts"

export interface ToolSystemOptions<E = never, R = never> {
  /** The project root. */
  readonly root: string
  /** Output settings; default: read FREECODE_OUTPUT_* through Effect Config. */
  readonly outputConfig?: Layer.Layer<OutputConfig, E, R>
  /** The tools to register; default: all built-ins. */
  readonly tools?: ReadonlyArray<Tool<BuiltinRequirements>>
  /**
   * The project configuration (permissions, hooks, MCP servers, profiles). Default: read
   * `freecode.json` and `.mcp.json` at the root when they exist (or what `ConfigSource` gives).
   */
  readonly config?: FreecodeConfigData
  /**
   * Who answers "ask": default the PrompterSource's person when one is set (`mcp`: the client's
   * elicitation), else Approval.layerNonInteractive (refuses, saying why).
   */
  readonly approval?: Layer.Layer<Approval>
  /** Hooks written as Effect functions, run after the configured command hooks. */
  readonly hooks?: ReadonlyArray<FunctionHook>
  /**
   * Where sessions (stored outputs, todos) are kept: `"memory"`, or the project's session
   * database (docs/session.md) with these options. Default: memory, unless `SessionPersistence`
   * is set (the CLI sets it for `--session ID`).
   */
  readonly sessions?: "memory" | Omit<SessionStoreOptions, "root">
  /**
   * A store shared by replicas (`postgres://…`, or a node:sqlite file): outputs, grants, todos
   * and job records go there instead, under this replica's lease (docs/scaling.md). Wins over
   * `sessions`.
   */
  readonly store?: Omit<SharedStateOptions, "workspace">
  /**
   * Folders holding skills (`<dir>/<name>/SKILL.md`), first wins. Default: FREECODE_SKILL_DIRS,
   * else `.freecode/skills` and `.claude/skills` at the root, then `~/.claude/skills`.
   */
  readonly skillDirs?: ReadonlyArray<string>
  /** Who answers the `question` tool: default Prompter.layerNonInteractive (nobody; the model decides). */
  readonly prompter?: Layer.Layer<Prompter>
  /**
   * Sub-agents: the `agent` tool is registered only with a model (any effect/ai provider's
   * LanguageModel layer) to run the child's tool loop (docs/session.md).
   */
  readonly agent?: RunnerOptions & { readonly model: Layer.Layer<LanguageModel.LanguageModel> }
  /**
   * Which tools are declared (docs/surfaces.md): the system's Dispatcher (and `ToolSurface`) is
   * then this surface over the registry. Default: no surface, every tool declared.
   */
  readonly surface?: SurfaceOptions
  /**
   * The program tool `code` (docs/code-mode.md): registered when given (true: the default
   * limits), and always under the `code` surface. Default: not registered.
   */
  readonly code?: CodeToolOptions | boolean
  /**
   * Whether bash runs in the OS sandbox when freecode.json's `sandbox.enabled` is absent
   * (docs/sandbox.md). Default: what `SandboxByDefault` says (false; the `mcp` command sets true).
   */
  readonly sandboxByDefault?: boolean
}

/** The stores a session keeps: in memory, or in the project's session database. */
const sessionStores = (root: string, sessions: ToolSystemOptions["sessions"], shared: ToolSystemOptions["store"]) => {
  const persistent = (options: Omit<SessionStoreOptions, "root">) =>
    Layer.mergeAll(
      overridable(OutputStore, layerSqliteOutputStore),
      overridable(TodoStore, TodoStore.layerSqlite),
      overridable(GrantStore, GrantStore.layerSqlite),
      overridable(JobRecordStore, JobRecordStore.layerSqlite)
    ).pipe(Layer.provideMerge(overridable(SessionStore, SessionStore.layer({ ...options, root }))))
  const memory = Layer.merge(
    overridable(OutputStore, OutputStore.layerSpilling),
    overridable(TodoStore, TodoStore.layerMemory)
  )
  const local =
    sessions === "memory"
      ? memory
      : sessions !== undefined
        ? persistent(sessions)
        : Layer.unwrap(
            Effect.gen(function* () {
              const { persist } = yield* SessionPersistence
              return persist ? persistent({}) : memory
            })
          )
  type Stores = Layer.Layer<
    Layer.Success<typeof local>,
    Layer.Error<typeof local> | StoreUnavailable,
    Layer.Services<typeof local>
  >
  const sharedOr = (
    settings: Omit<SharedStateOptions, "workspace" | "store"> & { readonly store?: string | undefined }
  ): Stores =>
    settings.store === undefined ? local : sharedStateLayer({ ...settings, store: settings.store, workspace: root })
  const stores: Stores =
    shared !== undefined
      ? sharedOr(shared)
      : Layer.unwrap(Effect.map(SharedStoreSetting, (setting) => sharedOr(setting)))
  // The memory tool's folder persists either way: it is the project's, not one session's.
  const stateDir = typeof sessions === "object" ? sessions.stateDir : undefined
  return Layer.merge(
    stores,
    overridable(MemoryFolder, MemoryFolder.layer(stateDir === undefined ? { root } : { root, stateDir }))
  )
}

/**
 * The sandbox from freecode.json's `sandbox` section, with `byDefault` (else `SandboxByDefault`,
 * which `mcp` sets) for an absent `enabled`. Hosts the permission rules allow
 * (`WebFetch(domain:…)`) are reachable from inside too.
 */
const sandboxFromConfig = (root: string, byDefault: boolean | undefined) =>
  Layer.unwrap(
    Effect.gen(function* () {
      const config = yield* FreecodeConfig
      const enabledByDefault = byDefault ?? (yield* SandboxByDefault)
      const domains = (sectionOf(config, permissionsSection)?.allow ?? []).flatMap((rule) => {
        const m = /^webfetch\(domain:([^)\s]+)\)$/i.exec(rule.trim())
        return m?.[1] === undefined ? [] : [m[1]]
      })
      return Sandbox.layer(resolveSandboxSettings(sectionOf(config, sandboxSection), enabledByDefault, domains), {
        root
      })
    })
  )

/** Registers tools when the layer is built. */
export const registerTools = (tools: ReadonlyArray<Tool<BuiltinRequirements>>) =>
  Layer.effectDiscard(
    Effect.gen(function* () {
      const registry = yield* ToolRegistry
      for (const tool of tools) yield* registry.register(tool)
    }).pipe(Effect.orDie)
  )

/**
 * Everything but the platform: needs FileSystem, Path and ChildProcessSpawner from the caller
 * (NodeServices.layer in layers/live.ts). LocalFs, unless given, is the platform layer over
 * that FileSystem (layers/live.ts gives the native one); WriteFs, unless given, the one that
 * fits it (WriteFs.layer).
 */
export const toolSystem = <E = never, R = never>(options: ToolSystemOptions<E, R>) => {
  const config = overridable<OutputConfig, OutputSettings, E | Config.ConfigError | InvalidSetting, R>(
    OutputConfig,
    options.outputConfig ?? OutputConfig.layer
  )
  const projectConfig = overridable(
    FreecodeConfig,
    options.config === undefined
      ? FreecodeConfig.layerFromSource(options.root, CONFIG_SECTIONS)
      : FreecodeConfig.layerWith(options.config)
  )
  const base = Layer.mergeAll(
    overridable(Workspace, Workspace.layer(options.root)),
    // Background jobs live as long as the system (or their session); their live output goes
    // to ToolEvents, their records to the session database when there is one.
    overridableReference(Jobs, Jobs.layer()).pipe(Layer.provideMerge(overridable(ToolEvents, ToolEvents.layer))),
    overridable(ToolRegistry, ToolRegistry.layer),
    overridable(LspClients, LspClients.layerFromConfig.pipe(Layer.provide(projectConfig))),
    overridable(ReadState, ReadState.layer),
    overridable(WebNetwork, WebNetwork.layer),
    overridable(Prompter, options.prompter ?? Prompter.layerFromSource),
    // glob's file lists from a warm index of the root (docs/search.md; FREECODE_INDEX=0: off).
    overridableReference(CurrentSearchBackend, searchIndexLayer(options.root)),
    // Bash asks it for every command line, the permission engine whether a command runs inside.
    overridableReference(
      Sandbox,
      sandboxFromConfig(options.root, options.sandboxByDefault).pipe(Layer.provide(projectConfig))
    )
  ).pipe(
    Layer.provideMerge(sessionStores(options.root, options.sessions, options.store)),
    Layer.provideMerge(config),
    Layer.provideMerge(Layer.merge(overridable(LocalFs, LocalFs.layerPlatform), overridable(WriteFs, WriteFs.layer))),
    // The one owner of per-session state: every service above keeps its sessions' state there.
    Layer.provideMerge(overridable(Sessions, Sessions.layer))
  )
  // websearch joins the built-ins only when a search API is configured (src/web/search/config.ts).
  const tools =
    options.tools === undefined
      ? Layer.mergeAll(
          registerTools(builtinTools),
          webSearchLayer,
          skillLayer(
            options.skillDirs === undefined ? { root: options.root } : { root: options.root, dirs: options.skillDirs }
          )
        )
      : registerTools(options.tools)
  // A rule or profile naming a tool that does not exist fails the build, naming file and key.
  const toolNamesChecked = Layer.effectDiscard(
    Effect.gen(function* () {
      yield* checkConfigTools(yield* FreecodeConfig, yield* ToolRegistry)
    })
  ).pipe(Layer.provide(projectConfig))
  const withTools = Layer.merge(tools, toolNamesChecked).pipe(Layer.provideMerge(base))
  const permissions = Layer.mergeAll(
    overridable(PermissionEngine, PermissionEngine.layer),
    overridable(Hooks, Hooks.layer(options.hooks))
  ).pipe(
    Layer.provideMerge(projectConfig),
    Layer.merge(overridable(Approval, options.approval ?? layerApprovalFromSource))
  )
  const system = overridable(Dispatcher, Dispatcher.layer).pipe(
    Layer.provideMerge(overridable(Orchestrator, Orchestrator.layer)),
    Layer.provideMerge(overridable(CallPath, CallPath.layer)),
    Layer.provideMerge(overridable(HistoryBudget, HistoryBudget.layer)),
    // MCP servers connect in the background: building the system never waits on one.
    Layer.provideMerge(overridable(McpClients, McpClients.layerFromConfig)),
    Layer.provideMerge(permissions),
    Layer.provideMerge(withTools)
  )
  // `code` dispatches through the system's own Dispatcher, so it is registered under any surface.
  const code = options.code ?? (options.surface?.surface === "code" ? true : undefined)
  const withCode =
    code === undefined || code === false
      ? system
      : codeLayer(code === true ? {} : code).pipe(Layer.provideMerge(system))
  // `agent` exists only with a model to run it; its runner needs the Dispatcher, so it goes on top.
  const agent: Layer.Layer<never, never, Dispatcher | ToolRegistry | HistoryBudget> =
    options.agent === undefined
      ? Layer.empty
      : agentLayer.pipe(
          Layer.provide(
            overridable(
              SubagentRunner,
              SubagentRunner.layerLanguageModel(options.agent).pipe(Layer.provide(options.agent.model))
            )
          )
        )
  // A surface replaces the Dispatcher, under the agent tool too: a sub-agent sees the same surface.
  // (A Dispatcher given by the embedder is theirs: no surface is put over it.)
  const surfaced =
    options.surface === undefined
      ? withCode
      : Layer.unwrap(
          Effect.map(Effect.serviceOption(Dispatcher), (given) =>
            given._tag === "Some" ? withCode : surfaceLayer(options.surface!).pipe(Layer.provideMerge(withCode))
          )
        )
  return agent.pipe(Layer.provideMerge(surfaced))
}
