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
 * `WriteFs.layer` chooses: native over Node's own FileSystem, platform over any other (as
 * layers/live.ts chooses LocalFs's), so the edit tools change the files the read tools see.
 */
import { Context, Effect, FileSystem, Layer, type PlatformError } from "effect"
import { sameAsNode } from "../fs/node-fs.ts"
import type { FileView } from "../read-state/read-state.ts"
import type { Change } from "./patch-commit.ts"
import { makeNativeWriteFs } from "./write-native.ts"
import { makePlatformWriteFs } from "./write-platform.ts"

export type FileKind = "File" | "Directory" | "SymbolicLink" | "Other"

export interface LoadedFile {
  readonly bytes: Uint8Array
  readonly view: FileView
  readonly type: FileKind
}

export interface WriteFsShape {
  /**
   * Where a write to `abs` (absolute) lands: every symbolic link on the way followed, the last
   * one too, also when it dangles (landing.ts); undefined for a loop of links.
   */
  readonly landing: (abs: string) => Effect.Effect<string | undefined>
  /**
   * The staging folder of a project (its real root), its dead owners' work recovered on first
   * use; undefined when there is none (each file is then still written atomically).
   */
  readonly staging: (realRoot: string) => Effect.Effect<string | undefined>
  /**
   * Runs `effect` holding the write lock of every target (keyed by its real path, taken in
   * sorted order), so a read-modify-write of a file never interleaves with another.
   */
  readonly withLocks: <A, E, R>(
    targets: ReadonlyArray<string>,
    staging: string | undefined,
    effect: Effect.Effect<A, E, R>
  ) => Effect.Effect<A, E | PlatformError.PlatformError, R>
  /** `target` (a landing path) as it is now, or undefined when it does not exist. */
  readonly load: (target: string) => Effect.Effect<LoadedFile | undefined, PlatformError.PlatformError>
  /** Replaces `target` with `bytes` atomically: a failure leaves the old content. */
  readonly write: (
    target: string,
    bytes: Uint8Array,
    staging: string | undefined
  ) => Effect.Effect<void, PlatformError.PlatformError>
  /** Makes every change or none (patch-commit.ts). */
  readonly commit: (
    changes: ReadonlyArray<Change>,
    staging: string | undefined
  ) => Effect.Effect<void, PlatformError.PlatformError>
  /** The modification time of `target`, or undefined when it cannot be read. */
  readonly mtimeOf: (target: string) => Effect.Effect<number | undefined>
}

/** The FileSystem calls the native layer makes on node:fs instead (the rename it leaves to the FileSystem). */
const BYPASSED = [
  "open",
  "readFile",
  "writeFile",
  "stat",
  "lstat",
  "readLink",
  "remove",
  "makeDirectory",
  "chmod"
] as const

export class WriteFs extends Context.Service<WriteFs, WriteFsShape>()("freecode/WriteFs") {
  /** node:fs with machine-wide locks and a crash journal; renames through the FileSystem given. */
  static readonly layerNative: Layer.Layer<WriteFs, never, FileSystem.FileSystem> = Layer.effect(
    WriteFs,
    Effect.map(FileSystem.FileSystem, makeNativeWriteFs)
  )
  /** Every call through the FileSystem service in context (an in-memory one, say). */
  static readonly layerPlatform: Layer.Layer<WriteFs, never, FileSystem.FileSystem> = Layer.effect(
    WriteFs,
    Effect.map(FileSystem.FileSystem, makePlatformWriteFs)
  )
  /** The layer that fits the FileSystem in context: native over Node's own, platform over any other. */
  static readonly layer: Layer.Layer<WriteFs, never, FileSystem.FileSystem> = Layer.unwrap(
    Effect.map(FileSystem.FileSystem, (fs) => (sameAsNode(fs, BYPASSED) ? WriteFs.layerNative : WriteFs.layerPlatform))
  )
}
