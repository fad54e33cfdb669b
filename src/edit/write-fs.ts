/**
 * `WriteFs`: the file-system calls of write, edit and apply_patch, behind one service — where a
 * write lands, one writer per file, loading the file to change, an atomic write, and a
 * multi-file commit that is all or nothing. Two layers implement it:
 *
 * - `WriteFs.layerNative` (write-native.ts): node:fs, as the CLI runs — a lock file per real
 *   path every process on the machine honours, temps and a crash journal in the project's
 *   staging folder, O_NOFOLLOW loads and descriptor-checked renames (docs/editing.md).
 * - `WriteFs.layerPlatform` (write-platform.ts): over effect's `FileSystem` service, so an
 *   in-memory FileSystem serves the edit tools too: one writer per file within the process,
 *   a patch all or nothing (undone on failure; no journal, since nothing outlives a crash).
 *
 * `WriteFs.layer` chooses by the context's `NativeFileSystem` (src/fs/node-fs.ts): native
 * where the FileSystem is said to be Node's own, platform over any other (as layers/live.ts
 * chooses LocalFs's), so the edit tools change the files the read tools see.
 */
import { Context, Effect, FileSystem, Layer } from "effect"
import { NativeFileSystem } from "../fs/node-fs.ts"
import type { WriteFsShape } from "./write-fs-shape.ts"
import { nativeWriteSteps } from "./write-native.ts"
import { platformWriteSteps } from "./write-platform.ts"
import { makeWriteFs } from "./write-transaction.ts"

export type {
  FileChange,
  FileKind,
  Found,
  LoadedFile,
  WriteFsShape,
  WriteRequest,
  WriteTransaction
} from "./write-fs-shape.ts"
export { WriteRefused } from "./write-fs-shape.ts"

export class WriteFs extends Context.Service<WriteFs, WriteFsShape>()("freecode/WriteFs") {
  /** node:fs with machine-wide locks and a crash journal; renames through the FileSystem given. */
  static readonly layerNative: Layer.Layer<WriteFs, never, FileSystem.FileSystem> = Layer.effect(
    WriteFs,
    Effect.map(FileSystem.FileSystem, (fs) => makeWriteFs(nativeWriteSteps(fs)))
  )
  /** Every call through the FileSystem service in context (an in-memory one, say). */
  static readonly layerPlatform: Layer.Layer<WriteFs, never, FileSystem.FileSystem> = Layer.effect(
    WriteFs,
    Effect.map(FileSystem.FileSystem, (fs) => makeWriteFs(platformWriteSteps(fs)))
  )
  /** The layer the context asks for: native where the FileSystem is said to be Node's own (NativeFileSystem), else platform. */
  static readonly layer: Layer.Layer<WriteFs, never, FileSystem.FileSystem> = Layer.unwrap(
    Effect.map(Effect.service(NativeFileSystem), (native) => (native ? WriteFs.layerNative : WriteFs.layerPlatform))
  )
}
