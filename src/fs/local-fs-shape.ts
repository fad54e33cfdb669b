/** What the LocalFs service offers (local-fs.ts), apart from its layers, so each layer's file can name it without a cycle. */
import type { Effect, PlatformError, Scope } from "effect"
import type { CheckedEntry } from "../tool/tool.ts"

/** What kind of file a path is, in the words Effect's FileSystem uses ("Unknown": could not say). */
export type FileType =
  | "File"
  | "Directory"
  | "SymbolicLink"
  | "BlockDevice"
  | "CharacterDevice"
  | "FIFO"
  | "Socket"
  | "Unknown"

/** A directory entry: its name, and its type (of the entry itself, links not followed). */
export interface DirectoryEntry {
  readonly name: string
  readonly type: FileType
}

/** What is known of a file opened for reading. */
export interface FileStats {
  readonly type: FileType
  readonly size: number
  /** Milliseconds since the epoch (0 when the file system keeps none). */
  readonly mtimeMs: number
  /**
   * Device, inode and link count, where the layer knows them: another name of a secret is found
   * by them. `mounted`: the file is on a bind mount (bind-mounts.ts), another name a link count
   * does not show.
   */
  readonly identity?: { readonly dev: number; readonly ino: number; readonly links: number; readonly mounted?: boolean }
}

/** What is at a path, links followed, without opening it. */
export interface PathInfo {
  readonly type: FileType
  /** The user id that owns it; undefined where the file system keeps none (an in-memory one). */
  readonly owner: number | undefined
}

/** A file opened read-only; closed when the scope closes. */
export interface OpenFile {
  readonly stats: FileStats
  /** Set when the caller named the file it expected and another was opened: what was (movedFrom). */
  readonly moved?: string
  /** Reads into `buffer` from `position`; the number of bytes read (0 at the end). */
  readonly read: (buffer: Uint8Array, position: number) => Effect.Effect<number, PlatformError.PlatformError>
}

/** A file stat'ed and, when it is a small regular file, read whole. */
export interface WholeFile {
  readonly stats: FileStats
  /** Set when the caller named the file it expected and another was opened (nothing is read then). */
  readonly moved?: string
  /** Its content; undefined when it is not a regular file, is `maxBytes` or larger, or grew while read. */
  readonly bytes: Uint8Array | undefined
}

/**
 * Something derived from a file's text (a compiled .gitignore). A layer may keep what it derived
 * while the file is unchanged: the spec is the cache's identity, so it must be a constant.
 */
export interface DerivedSpec<V> {
  readonly name: string
  readonly derive: (dir: string, text: string) => V
  /** Most files kept. */
  readonly maxPaths: number
}

export interface LocalFsShape {
  /**
   * Whether paths name files on this machine's disk as a child process sees them: only then
   * may grep and glob hand a search to rg (search/auto.ts). False for the platform layer,
   * whose FileSystem may be anything.
   */
  readonly onDisk: boolean
  /** Where `path` (absolute) really is, symlinks followed; NotFound when it does not exist. */
  readonly realPath: (path: string) => Effect.Effect<string, PlatformError.PlatformError>
  /**
   * True when every component of `path` below `base` exists and none is a symbolic link, so
   * `path` is its own real path when `base` is. False when a link or a missing component is
   * found, or when this layer cannot tell cheaply (the caller then asks realPath).
   */
  readonly linkFreeBelow: (base: string, path: string) => boolean
  /**
   * What is at `path` (absolute), links followed, without opening it: whether something is there
   * at all (NotFound when not), its type and owner. For looking a name up (a marker file, a
   * program on PATH), where opening could wait on what it is or fail on a file one may not read.
   */
  readonly stat: (path: string) => Effect.Effect<PathInfo, PlatformError.PlatformError>
  /** Where the symbolic link `path` points (as written in it); undefined when `path` is no link or is missing. */
  readonly readLink: (path: string) => Effect.Effect<string | undefined>
  /** A directory's entries, sorted by name (UTF-16 code units). The array must not be changed. */
  readonly readDirectory: (path: string) => Effect.Effect<ReadonlyArray<DirectoryEntry>, PlatformError.PlatformError>
  /**
   * Opens `path` for reading without waiting on what it is (a FIFO, a terminal): the caller
   * checks `stats.type` and reads only a regular file. With `expected` (a real path: what a
   * permission check resolved `path` to), the file opened is checked to be that one, and `moved`
   * says what was opened instead (the native layer; the platform layer cannot tell and opens).
   */
  readonly openForReading: (
    path: string,
    expected?: string
  ) => Effect.Effect<OpenFile, PlatformError.PlatformError, Scope.Scope>
  /**
   * A small regular file read whole in one step, or undefined when this layer has no such fast
   * path for `path` (the caller then opens it and streams).
   */
  readonly readWhole: (
    path: string,
    maxBytes: number,
    /** As for openForReading: the real path the file must be; nothing is read when it is not. */
    expected?: string
  ) => Effect.Effect<WholeFile, PlatformError.PlatformError> | undefined
  /**
   * The entry at `path` itself (links not followed): its device, inode and mode, or null when
   * nothing is there. Only a layer on this machine's disk has it: what a write was checked
   * against (ToolContext.checked), so the write can refuse another file put in its place.
   */
  readonly entryOf?: (path: string) => CheckedEntry | null
  /** A whole file's bytes (grep's own search). */
  readonly readFile: (path: string) => Effect.Effect<Uint8Array, PlatformError.PlatformError>
  /**
   * What `spec` derives from `dir/name`'s text, or undefined when that is not a readable
   * regular file. Kept by the layer while the file is unchanged, when it can tell.
   */
  readonly readDerived: <V>(dir: string, name: string, spec: DerivedSpec<V>) => Effect.Effect<V | undefined>
}
