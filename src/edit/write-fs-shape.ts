/** What the WriteFs service offers (write-fs.ts), apart from its layers, so each layer's file can name it without a cycle. */
import { Data, type Effect, type PlatformError } from "effect"
import type { FileSnapshot, FileView, ReadState, RecordedBy } from "../read-state/read-state.ts"
import type { CheckedEntry, CheckedPath } from "../tool/tool.ts"
import type { Expected } from "./atomic-write.ts"
import type { MakeParent } from "./make-folders.ts"
import type { Change } from "./patch-commit.ts"

/** A write that can never be made as asked (a NUL byte, a loop of links, a link out of the project); nothing was changed. */
export class WriteRefused extends Data.TaggedError("WriteRefused")<{ readonly message: string }> {}

export type FileKind = "File" | "Directory" | "SymbolicLink" | "Other"

export interface LoadedFile {
  readonly bytes: Uint8Array
  readonly view: FileView
  readonly type: FileKind
  /** Its device, inode and mode, where the layer knows them (natively): what the write then replaces. */
  readonly identity?: CheckedEntry
}

export type { Expected } from "./atomic-write.ts"

/** The steps a layer is made of; the transaction (write-transaction.ts) puts them in order. */
export interface WriteSteps {
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
   * Runs `effect` holding what the layer needs beyond the in-process lock the transaction
   * takes (ReadState.withPathLock): the native layer's machine-wide lock files, keyed by real
   * path and taken in sorted order; nothing over an in-memory file system.
   */
  readonly lockFiles: <A, E, R>(
    targets: ReadonlyArray<string>,
    staging: string | undefined,
    effect: Effect.Effect<A, E, R>
  ) => Effect.Effect<A, E | PlatformError.PlatformError, R>
  /** `target` (a landing path) as it is now, or undefined when it does not exist. */
  readonly load: (target: string) => Effect.Effect<LoadedFile | undefined, PlatformError.PlatformError>
  /**
   * Makes the folder `target` goes in, as `check` saw it (natively: make-folders.ts, each folder
   * made verified, `made` holding those this write made); the folder the write must then find
   * there, or undefined when the layer cannot say.
   */
  readonly makeParent: MakeParent
  /**
   * Replaces `target` with `bytes` atomically: a failure leaves the old content. The file there
   * must be `expect`, in the folder `folder` (natively: another one put in its place is refused,
   * and nothing written).
   */
  readonly write: (
    target: string,
    bytes: Uint8Array,
    staging: string | undefined,
    expect: Expected,
    folder?: CheckedEntry | null
  ) => Effect.Effect<void, PlatformError.PlatformError>
  /** Makes every change or none (patch-commit.ts). */
  readonly commit: (
    changes: ReadonlyArray<Change>,
    staging: string | undefined
  ) => Effect.Effect<void, PlatformError.PlatformError>
  /** The modification time of `target`, or undefined when it cannot be read. */
  readonly mtimeOf: (target: string) => Effect.Effect<number | undefined>
}

/** What a write is for: the session it records in, the project, the tool, and every path it may change. */
export interface WriteRequest {
  readonly sessionId: string
  /** The project root (absolute): a path given inside it must land inside it. */
  readonly root: string
  readonly by: Exclude<RecordedBy, "read">
  /** Every path the write may change, absolute, as the model named them. */
  readonly paths: ReadonlyArray<string>
  /**
   * What the permission rules checked (ToolContext.checked): a path must still land where it
   * did then, on the same file, or the write is refused before anything changes.
   */
  readonly checked?: ReadonlyArray<CheckedPath> | undefined
}

/** A file as the transaction found it, under its lock. */
export interface Found {
  /** Its content and kind, or undefined when it does not exist. */
  readonly file: LoadedFile | undefined
  /** What the session last knew it to hold (the stale check compares the two). */
  readonly seen: FileSnapshot | undefined
}

/** One file of a multi-file change, named as the model named it. */
export interface FileChange {
  readonly abs: string
  /** The new content, or undefined to remove the file (its record is forgotten). */
  readonly bytes: Uint8Array | undefined
  /** The content before, or undefined when the file did not exist. */
  readonly before: Uint8Array | undefined
  /** The model has seen all of the new content (FileSnapshot.known). Default true. */
  readonly known?: boolean
}

/** What a write's body may do, every path of the request locked. */
export interface WriteTransaction {
  /** Where a path of the request lands (its links followed). */
  readonly target: (abs: string) => string
  /** A path of the request as it is now, and what the session last knew of it. */
  readonly load: (abs: string) => Effect.Effect<Found, PlatformError.PlatformError>
  /** Writes one file atomically (its folder made when it was missing) and records it. */
  readonly write: (abs: string, bytes: Uint8Array, known: boolean) => Effect.Effect<void, PlatformError.PlatformError>
  /** Changes every file or none; records what was written and forgets what was removed. */
  readonly commit: (changes: ReadonlyArray<FileChange>) => Effect.Effect<void, PlatformError.PlatformError>
}

export interface WriteFsShape {
  /** Where a write to `abs` lands (WriteSteps.landing): what a write tool declares it touches. */
  readonly landing: (abs: string) => Effect.Effect<string | undefined>
  /**
   * Runs `body` as one write: every path of `request` checked (no NUL byte, no loop of links,
   * nothing inside the project that a link leads out of), locked (ReadState.withPathLock, then
   * the layer's own locks), loaded, written and recorded in ReadState under those locks. The
   * staging folder and the read-state record are the transaction's; the body decides what to
   * write. Refused before anything is locked: WriteRefused, saying what to do instead.
   */
  readonly transaction: <A, E, R>(
    request: WriteRequest,
    body: (tx: WriteTransaction) => Effect.Effect<A, E, R>
  ) => Effect.Effect<A, E | WriteRefused | PlatformError.PlatformError, R | ReadState>
}
