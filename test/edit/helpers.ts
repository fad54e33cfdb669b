/** Helpers for the edit tests: real files in a temp directory, a ReadState, fresh call ids. */

import { Effect, FileSystem, Layer, PlatformError } from "effect"
import { WriteFs } from "../../src/edit/write-fs.ts"
import { ReadState } from "../../src/read-state/read-state.ts"
import type { ToolContext } from "../../src/tool/tool.ts"
import { nodeLayer } from "../fs/layers.ts"
import { writeTree } from "../tools/helpers.ts"

export const layer = Layer.merge(nodeLayer, ReadState.layerWith({ dedup: true }))

/**
 * The edit tools' WriteFs (native) over `fs`: a FileSystem with a fault injected reaches their
 * writes. Fresh: inside `layer` the native WriteFs is already built, and would be shared.
 */
export const writesOver = (fs: FileSystem.FileSystem) =>
  Layer.fresh(WriteFs.layerNative).pipe(Layer.provide(Layer.succeed(FileSystem.FileSystem, fs)))

let calls = 0
/** A context with a new call id each time (read records are keyed by call id). */
export const ctxFor = (root: string, sessionId = "s1"): ToolContext => ({
  sessionId,
  callId: `call-${++calls}`,
  root,
  canSeeImages: false,
  emit: () => Effect.void
})

export const project = (tree: Readonly<Record<string, string | Uint8Array | null>> = {}) =>
  Effect.gen(function* () {
    const fs = yield* FileSystem.FileSystem
    const root = yield* fs.makeTempDirectoryScoped({ prefix: "freecode-edit-" })
    yield* writeTree(root, tree)
    return root
  })

export const readBytes = (path: string) =>
  Effect.gen(function* () {
    const fs = yield* FileSystem.FileSystem
    return yield* fs.readFile(path)
  })

export const readText = (path: string) =>
  Effect.gen(function* () {
    const fs = yield* FileSystem.FileSystem
    return yield* fs.readFileString(path)
  })

/** `fs` whose `n`th rename fails as a full disk would: a commit that breaks half-way. */
export const failingRename = (fs: FileSystem.FileSystem, n: number): FileSystem.FileSystem => {
  let renames = 0
  const failure = PlatformError.systemError({
    _tag: "Unknown",
    module: "FileSystem",
    method: "rename",
    description: "disk full"
  })
  return FileSystem.FileSystem.of({
    ...fs,
    rename: (from, to) => (++renames === n ? Effect.fail(failure) : fs.rename(from, to))
  })
}
