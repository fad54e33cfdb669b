/**
 * The tool system on Node: real files, real processes, settings from the environment. Any of
 * its services given by the caller is used instead of the default (overridable.ts), the
 * platform's too: a FileSystem given by the caller (an in-memory one) serves every built-in
 * tool, through the platform layers of LocalFs and WriteFs; over Node's own FileSystem both
 * are the native layers.
 */
import * as NodeChildProcessSpawner from "@effect/platform-node/NodeChildProcessSpawner"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as NodePath from "@effect/platform-node/NodePath"
import * as NodeStdio from "@effect/platform-node/NodeStdio"
import * as NodeTerminal from "@effect/platform-node/NodeTerminal"
import { Context, Effect, FileSystem, Layer, Path, Stdio, Terminal } from "effect"
import { ChildProcessSpawner } from "effect/process"
import { WriteFs } from "../edit/write-fs.ts"
import { LocalFs } from "../fs/local-fs.ts"
import { overridable } from "./overridable.ts"
import { type ToolSystemOptions, toolSystem } from "./system.ts"

/** NodeServices.layer, each service unless the caller gave it. */
const nodeServices = overridable(ChildProcessSpawner.ChildProcessSpawner, NodeChildProcessSpawner.layer).pipe(
  Layer.provideMerge(
    Layer.mergeAll(
      overridable(FileSystem.FileSystem, NodeFileSystem.layer),
      overridable(Path.Path, NodePath.layer),
      overridable(Stdio.Stdio, NodeStdio.layer),
      overridable(Terminal.Terminal, NodeTerminal.layer)
    )
  )
)

/** The calls LocalFs's native layer makes in place of a FileSystem's. */
const REPLACED = ["readFile", "open", "readDirectoryEntries", "stat", "lstat", "realPath"] as const

let nodeFs: FileSystem.FileSystem | undefined
/**
 * Whether `fs` is Node's own FileSystem (the CLI provides one around the system): its methods
 * are the module's functions, the same in every instance. A FileSystem that replaces any of
 * the calls the native layer would bypass (an in-memory one, a wrapper that logs reads) is not.
 */
const isNodeFileSystem = (fs: FileSystem.FileSystem): boolean => {
  nodeFs ??= Context.get(Effect.runSync(Effect.scoped(Layer.build(NodeFileSystem.layer))), FileSystem.FileSystem)
  const node = nodeFs
  return REPLACED.every((method) => fs[method] === node[method])
}

/**
 * Node's services, each unless the caller gave it, and the LocalFs and WriteFs that fit the
 * FileSystem: native over Node's, the platform layers over any other the caller gave.
 */
export const nodePlatform = Layer.unwrap(
  Effect.map(Effect.serviceOption(FileSystem.FileSystem), (given) => {
    const native = given._tag === "None" || isNodeFileSystem(given.value)
    return Layer.merge(
      overridable(LocalFs, native ? LocalFs.layerNative : LocalFs.layerPlatform),
      overridable(WriteFs, native ? WriteFs.layerNative : WriteFs.layerPlatform)
    ).pipe(Layer.provideMerge(nodeServices))
  })
)

export const ToolSystem = {
  layer: <E = never, R = never>(options: ToolSystemOptions<E, R>) =>
    toolSystem(options).pipe(Layer.provideMerge(nodePlatform))
}

export type { ToolSystemOptions }
