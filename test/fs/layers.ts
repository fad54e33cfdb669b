/**
 * The LocalFs layers tests run their cases over, each with Node's services and the native
 * WriteFs (the edit tools' node:fs machinery: test/edit/write-layers.test.ts runs the edit
 * tools over both WriteFs layers) under it: the
 * native layer on this machine's mounts, the native layer with no local mount (every call
 * through the thread pool, as on a network mount), and the platform layer over Node's
 * FileSystem. A test chooses a layer; nothing is switched by an environment variable.
 */
import { NodeServices } from "@effect/platform-node"
import { Layer } from "effect"
import { WriteFs } from "../../src/edit/write-fs.ts"
import { LocalFs } from "../../src/fs/local-fs.ts"

export type FsMode = "native" | "pool" | "platform"

const localFsOf = (mode: FsMode) =>
  mode === "native"
    ? LocalFs.layerNative
    : mode === "pool"
      ? LocalFs.layerNativeWith({ mounts: [] })
      : LocalFs.layerPlatform

/** Node's services, the native WriteFs and the LocalFs of `mode`. */
export const nodeWith = (mode: FsMode) =>
  Layer.merge(localFsOf(mode), WriteFs.layerNative).pipe(Layer.provideMerge(NodeServices.layer))

/** Node's services and the native LocalFs: what the CLI runs on. */
export const nodeLayer = nodeWith("native")

export const FS_MODES: ReadonlyArray<FsMode> = ["native", "pool", "platform"]
