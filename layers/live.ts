/**
 * The tool system on Node: real files, real processes, settings from the environment. Any of
 * its services given by the caller is used instead of the default (overridable.ts), the
 * platform's too: a FileSystem given by the caller (an in-memory one) serves every built-in
 * tool, through the platform layers of LocalFs and WriteFs. The native layers are taken where
 * the context says the FileSystem is Node's own (`NativeFileSystem`, src/fs/node-fs.ts): when
 * the caller gives none (Node's is then provided, and said to be), or says so with its own.
 */
import * as NodeChildProcessSpawner from "@effect/platform-node/NodeChildProcessSpawner"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as NodePath from "@effect/platform-node/NodePath"
import * as NodeStdio from "@effect/platform-node/NodeStdio"
import * as NodeTerminal from "@effect/platform-node/NodeTerminal"
import { Effect, FileSystem, Layer, Path, Stdio, Terminal } from "effect"
import { ChildProcessSpawner } from "effect/process"
import { LocalFs } from "../src/fs/local-fs.ts"
import { NativeFileSystem } from "../src/fs/node-fs.ts"
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

/**
 * Node's services, each unless the caller gave it, and the LocalFs the context asks for: native
 * where the FileSystem is Node's own (NativeFileSystem), the platform layer over any other.
 * (WriteFs chooses by the same setting, in toolSystem: WriteFs.layer.)
 */
export const nodePlatform = Layer.unwrap(
  Effect.gen(function* () {
    const given = yield* Effect.serviceOption(FileSystem.FileSystem)
    const native = given._tag === "None" || (yield* NativeFileSystem)
    // The choice is kept in the context, where WriteFs.layer (in toolSystem) reads it.
    return overridable(LocalFs, native ? LocalFs.layerNative : LocalFs.layerPlatform).pipe(
      Layer.provideMerge(nodeServices),
      Layer.merge(Layer.succeed(NativeFileSystem, native))
    )
  })
)

export const ToolSystem = {
  layer: <E = never, R = never>(options: ToolSystemOptions<E, R>) =>
    toolSystem(options).pipe(Layer.provideMerge(nodePlatform))
}

export type { ToolSystemOptions }
