/**
 * The tool system for tests: real Node services (tests use real files and processes in temp
 * directories), fixed output settings instead of the environment.
 */
import { NodeServices } from "@effect/platform-node"
import { Layer } from "effect"
import { OutputConfig, type OutputSettings } from "../src/output/config.ts"
import type { Tool } from "../src/tool/tool.ts"
import type { BuiltinRequirements } from "../src/tools/index.ts"
import { toolSystem } from "./system.ts"

export const testToolSystem = (options: {
  readonly root: string
  readonly output?: Partial<OutputSettings>
  readonly tools?: ReadonlyArray<Tool<BuiltinRequirements>>
}) =>
  toolSystem({
    root: options.root,
    outputConfig: OutputConfig.layerWith(options.output ?? {}),
    ...(options.tools === undefined ? {} : { tools: options.tools })
  }).pipe(Layer.provideMerge(NodeServices.layer))
