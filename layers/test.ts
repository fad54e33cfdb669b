/**
 * The tool system for tests: real Node services (tests use real files and processes in temp
 * directories), fixed output settings instead of the environment.
 */
import { Layer } from "effect"
import { OutputConfig, type OutputSettings } from "../src/output/config.ts"
import { nodePlatform } from "./live.ts"
import { type ToolSystemOptions, toolSystem } from "./system.ts"

/**
 * `toolSystem` with `output` settings fixed (default: the defaults) instead of read from the
 * environment, and the Node services provided (each unless given, as in ToolSystem.layer).
 * Every other option passes through.
 */
export const testToolSystem = (
  options: Omit<ToolSystemOptions, "outputConfig"> & { readonly output?: Partial<OutputSettings> }
) => {
  const { output, ...rest } = options
  return toolSystem({ ...rest, outputConfig: OutputConfig.layerWith(output ?? {}) }).pipe(
    Layer.provideMerge(nodePlatform)
  )
}
