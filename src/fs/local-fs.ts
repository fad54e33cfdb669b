/**
 * `LocalFs`: the file-system calls on the hot path of read, ls, glob, grep and the containment
 * check, behind one service. Two layers implement it:
 *
 * - `LocalFs.layerNative` (native.ts): node:fs, synchronous on a local mount, the thread pool
 *   elsewhere, with the listing and derived-file caches owned by the layer.
 * - `LocalFs.layerPlatform` (platform.ts): over effect's `FileSystem` service, so whatever
 *   FileSystem is provided (an in-memory one, a remote one) serves every built-in tool.
 *
 * Both give the same answers; tests run the same cases over each.
 */
import { Context, Effect, FileSystem, Layer } from "effect"
import type { LocalFsShape } from "./local-fs-shape.ts"
import { makeNativeFs, type NativeFsOptions } from "./native.ts"
import { NativeFileSystem } from "./node-fs.ts"
import { makePlatformFs } from "./platform.ts"

export type {
  DerivedSpec,
  DirectoryEntry,
  FileStats,
  FileType,
  LocalFsShape,
  OpenFile,
  PathInfo,
  WholeFile
} from "./local-fs-shape.ts"

export class LocalFs extends Context.Service<LocalFs, LocalFsShape>()("freecode/LocalFs") {
  /** node:fs, synchronous on local mounts (the mount table read once, when the layer is built). */
  static readonly layerNative: Layer.Layer<LocalFs> = Layer.sync(LocalFs, () => makeNativeFs())
  /** node:fs with fixed options: `mounts: []` sends every call to the thread pool, as on a network mount. */
  static readonly layerNativeWith = (options: NativeFsOptions): Layer.Layer<LocalFs> =>
    Layer.sync(LocalFs, () => makeNativeFs(options))
  /** Over the FileSystem service in context: an in-memory FileSystem then serves every built-in tool. */
  static readonly layerPlatform: Layer.Layer<LocalFs, never, FileSystem.FileSystem> = Layer.effect(
    LocalFs,
    Effect.map(FileSystem.FileSystem, makePlatformFs)
  )
  /**
   * The layer the context asks for: native where the FileSystem is said to be Node's own
   * (NativeFileSystem), else the platform layer over it. For what reads project files before a
   * tool system exists (the CLI's config check), so it reads them as that system will.
   */
  static readonly layer: Layer.Layer<LocalFs, never, FileSystem.FileSystem> = Layer.unwrap(
    Effect.map(Effect.service(NativeFileSystem), (native) => (native ? LocalFs.layerNative : LocalFs.layerPlatform))
  )
}
