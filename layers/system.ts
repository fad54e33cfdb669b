/**
 * Composes the services into one tool system. Each piece is its own layer, so an embedder or a
 * test swaps one (a persistent OutputStore, fixed OutputConfig) without rebuilding the rest.
 */
import { type Config, Effect, Layer } from "effect"
import { Dispatcher } from "../src/dispatch/dispatcher.ts"
import { ToolEvents } from "../src/events/events.ts"
import { Orchestrator } from "../src/orchestrator/orchestrator.ts"
import { type InvalidSetting, OutputConfig } from "../src/output/config.ts"
import { OutputStore } from "../src/output/store.ts"
import { ToolRegistry } from "../src/registry/registry.ts"
import type { Tool } from "../src/tool/tool.ts"
import { Workspace } from "../src/tool/workspace.ts"
import { type BuiltinRequirements, builtinTools } from "../src/tools/index.ts"

export interface ToolSystemOptions<E = never, R = never> {
  /** The project root. */
  readonly root: string
  /** Output settings; default: read FREECODE_OUTPUT_* through Effect Config. */
  readonly outputConfig?: Layer.Layer<OutputConfig, E, R>
  /** The tools to register; default: all built-ins. */
  readonly tools?: ReadonlyArray<Tool<BuiltinRequirements>>
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
  const base = Layer.mergeAll(Workspace.layer(options.root), ToolEvents.layer, ToolRegistry.layer).pipe(
    Layer.provideMerge(OutputStore.layerMemory),
    Layer.provideMerge(config)
  )
  const withTools = registerTools(options.tools ?? builtinTools).pipe(Layer.provideMerge(base))
  return Dispatcher.layer.pipe(Layer.provideMerge(Orchestrator.layer), Layer.provideMerge(withTools))
}
