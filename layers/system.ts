/**
 * Composes the services into one tool system. Each piece is its own layer, so an embedder or a
 * test swaps one (a persistent OutputStore, fixed OutputConfig) without rebuilding the rest.
 */
import { type Config, Effect, Layer } from "effect"
import { ConfigSource, FreecodeConfig } from "../src/config/load.ts"
import type { FreecodeConfigData } from "../src/config/schema.ts"
import { Dispatcher } from "../src/dispatch/dispatcher.ts"
import { ToolEvents } from "../src/events/events.ts"
import { type FunctionHook, Hooks } from "../src/hooks/hooks.ts"
import { LspClients } from "../src/lsp/service.ts"
import { McpClients } from "../src/mcp/clients.ts"
import { Orchestrator } from "../src/orchestrator/orchestrator.ts"
import { type InvalidSetting, OutputConfig } from "../src/output/config.ts"
import { HistoryBudget } from "../src/output/history-budget.ts"
import { OutputStore } from "../src/output/store.ts"
import { Approval } from "../src/permission/approval.ts"
import { PermissionEngine } from "../src/permission/engine.ts"
import { ReadState } from "../src/read-state/read-state.ts"
import { ToolRegistry } from "../src/registry/registry.ts"
import type { Tool } from "../src/tool/tool.ts"
import { Workspace } from "../src/tool/workspace.ts"
import { type BuiltinRequirements, builtinTools } from "../src/tools/index.ts"
import { webSearchLayer } from "../src/tools/websearch.ts"

export interface ToolSystemOptions<E = never, R = never> {
  /** The project root. */
  readonly root: string
  /** Output settings; default: read FREECODE_OUTPUT_* through Effect Config. */
  readonly outputConfig?: Layer.Layer<OutputConfig, E, R>
  /** The tools to register; default: all built-ins. */
  readonly tools?: ReadonlyArray<Tool<BuiltinRequirements>>
  /**
   * The project configuration (permissions, hooks, MCP servers, profiles). Default: read
   * `freecode.json` and `.mcp.json` at the root when they exist (or the file in `ConfigSource`).
   */
  readonly config?: FreecodeConfigData
  /** Who answers "ask": default Approval.layerNonInteractive (refuses, saying why). */
  readonly approval?: Layer.Layer<Approval>
  /** Hooks written as Effect functions, run after the configured command hooks. */
  readonly hooks?: ReadonlyArray<FunctionHook>
}

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
 * (NodeServices.layer in layers/live.ts).
 */
export const toolSystem = <E = never, R = never>(options: ToolSystemOptions<E, R>) => {
  const config: Layer.Layer<OutputConfig, E | Config.ConfigError | InvalidSetting, R> =
    options.outputConfig ?? OutputConfig.layer
  const base = Layer.mergeAll(
    Workspace.layer(options.root),
    ToolEvents.layer,
    ToolRegistry.layer,
    LspClients.layer,
    ReadState.layer
  ).pipe(Layer.provideMerge(OutputStore.layerSpilling), Layer.provideMerge(config))
  // websearch joins the built-ins only when a search API is configured (src/web/search/config.ts).
  const tools =
    options.tools === undefined
      ? Layer.merge(registerTools(builtinTools), webSearchLayer)
      : registerTools(options.tools)
  const withTools = tools.pipe(Layer.provideMerge(base))
  const projectConfig =
    options.config === undefined
      ? Layer.unwrap(
          Effect.gen(function* () {
            const source = yield* ConfigSource
            return FreecodeConfig.layerFrom(options.root, source.file)
          })
        )
      : FreecodeConfig.layerWith(options.config)
  const permissions = Layer.mergeAll(PermissionEngine.layer, Hooks.layer(options.hooks)).pipe(
    Layer.provideMerge(projectConfig),
    Layer.merge(options.approval ?? Approval.layerNonInteractive)
  )
  return Dispatcher.layer.pipe(
    Layer.provideMerge(Orchestrator.layer),
    Layer.provideMerge(HistoryBudget.layer),
    // MCP servers connect in the background: building the system never waits on one.
    Layer.provideMerge(McpClients.layerFromConfig),
    Layer.provideMerge(permissions),
    Layer.provideMerge(withTools)
  )
}
