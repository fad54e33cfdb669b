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
import { Effect, FileSystem, Layer, Path, Stdio, Terminal } from "effect"
import { ChildProcessSpawner } from "effect/process"
import { LocalFs } from "../fs/local-fs.ts"
import { sameAsNode } from "../fs/node-fs.ts"
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

/**
 * Node's services, each unless the caller gave it, and the LocalFs that fits the FileSystem:
 * native over Node's, the platform layer over any other the caller gave. (WriteFs chooses the
 * same way, in toolSystem: WriteFs.layer.)
 */
export const nodePlatform = Layer.unwrap(
  Effect.map(Effect.serviceOption(FileSystem.FileSystem), (given) =>
    overridable(
      LocalFs,
      given._tag === "Some" && !sameAsNode(given.value, REPLACED) ? LocalFs.layerPlatform : LocalFs.layerNative
    ).pipe(Layer.provideMerge(nodeServices))
  )
)

export const ToolSystem = {
  layer: <E = never, R = never>(options: ToolSystemOptions<E, R>) =>
    toolSystem(options).pipe(Layer.provideMerge(nodePlatform))
}

export type { ToolSystemOptions }
