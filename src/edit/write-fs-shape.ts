/** What the WriteFs service offers (write-fs.ts), apart from its layers, so each layer's file can name it without a cycle. */
import type { Effect, PlatformError } from "effect"
import type { FileView } from "../read-state/read-state.ts"
import type { Change } from "./patch-commit.ts"

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
