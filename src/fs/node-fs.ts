/**
 * Which file-system layers a system takes, said once, explicitly: `NativeFileSystem` is true
 * when the FileSystem in context is Node's own, so a native layer (LocalFs's and WriteFs's) may
 * call node:fs in its place. The layer that provides Node's FileSystem says so
 * (`nodeFileSystem`, which layers/live.ts uses when the caller gives none). Any FileSystem
 * provided without it (an in-memory one, a wrapper that logs reads or writes, or Node's own
 * given as is) is gone through by the platform layers: the default is the one that is never
 * wrong, and an embedder opts into the fast path by providing `NativeFileSystem` true.
 */
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import { Context, type FileSystem, Layer } from "effect"

export class NativeFileSystem extends Context.Reference<boolean>("freecode/NativeFileSystem", {
  defaultValue: () => false
}) {}

/** Node's FileSystem, and the word that it is Node's: the native layers may bypass it. */
export const nodeFileSystem: Layer.Layer<FileSystem.FileSystem> = Layer.merge(
  NodeFileSystem.layer,
  Layer.succeed(NativeFileSystem, true)
)
