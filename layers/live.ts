/** The tool system on Node: real files, real processes, settings from the environment. */
import * as NodeServices from "@effect/platform-node/NodeServices"
import { Layer } from "effect"
import { type ToolSystemOptions, toolSystem } from "./system.ts"

export const ToolSystem = {
  layer: <E = never, R = never>(options: ToolSystemOptions<E, R>) =>
    toolSystem(options).pipe(Layer.provideMerge(NodeServices.layer))
}

export type { ToolSystemOptions }
