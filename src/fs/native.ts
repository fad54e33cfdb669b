/**
 * File-system calls on the hot path of every call, made directly on node:fs because Effect's
 * FileSystem offers them only in a costlier form.
 *
 * On a local file system they are synchronous. A libuv thread-pool round trip cost 50–200 µs
 * of CPU on the VM this was measured on (waking a pool thread, then the loop), ten times the
 * work of a 4 KB read from the page cache: fs.promises.readFile of 4 KB took 228 µs of CPU, the
 * same calls made synchronously 25 µs (docs/benchmarks.md). A path on anything else (NFS, SMB,
 * FUSE, 9p, proc, or any platform without /proc/self/mountinfo; see local-mounts.ts) keeps the
 * pool: a hung mount then holds one pool thread, and the call can still time out instead of
 * freezing the process.
 *
 * - `realPath` is one `realpath(3)`; FileSystem.realPath walks the path with one `lstat` per
 *   component.
 * - `openForReading` hands back a plain descriptor that is closed synchronously: `close` on a
 *   read-only descriptor never blocks.
 */
import * as NFS from "node:fs"
import { Effect, PlatformError, type Scope } from "effect"
import { isOnLocalMount, mountOf } from "./local-mounts.ts"
import { makeStatCache } from "./stat-cache.ts"

const reasonOf = (code: string | undefined): PlatformError.SystemErrorTag => {
  switch (code) {
    case "ENOENT":
      return "NotFound"
    case "EACCES":
    case "EPERM":
      return "PermissionDenied"
    case "EEXIST":
      return "AlreadyExists"
    case "EISDIR":
    case "ENOTDIR":
    case "ELOOP":
      return "BadResource"
    case "EBUSY":
      return "Busy"
    case "EAGAIN":
      return "WouldBlock"
    case "ETIMEDOUT":
      return "TimedOut"
    default:
      return "Unknown"
  }
}

/** A node:fs error as the PlatformError the rest of the code already handles. */
const toPlatformError = (method: string, path: string | number, e: unknown): PlatformError.PlatformError => {
  const err = e as NodeJS.ErrnoException
  return PlatformError.systemError({
    _tag: reasonOf(err.code),
    module: "FileSystem",
    method,
    pathOrDescriptor: path,
    ...(err.syscall === undefined ? {} : { syscall: err.syscall }),
    description: err.message,
    cause: e
  })
}

/** Runs a synchronous node:fs call as an Effect. */
const now = <A>(method: string, path: string | number, run: () => A): Effect.Effect<A, PlatformError.PlatformError> =>
  Effect.try({ try: run, catch: (e) => toPlatformError(method, path, e) })

/** Runs a callback-style node:fs call on the thread pool as an Effect. */
const call = <A>(
  method: string,
  path: string | number,
  run: (done: (e: NodeJS.ErrnoException | null, a: A) => void) => void
): Effect.Effect<A, PlatformError.PlatformError> =>
  Effect.callback<A, PlatformError.PlatformError>((resume) => {
    run((e, a) => resume(e === null ? Effect.succeed(a) : Effect.fail(toPlatformError(method, path, e))))
  })

/** Where `path` (absolute) really is, symlinks followed: one realpath(3). */
export const realPath = (path: string): Effect.Effect<string, PlatformError.PlatformError> =>
  isOnLocalMount(path)
    ? now("realPath", path, () => NFS.realpathSync.native(path, "utf8"))
    : call<string>("realPath", path, (done) => NFS.realpath.native(path, "utf8", done))

/** What kind of file a path is, in the words Effect's FileSystem uses. */
export type FileType = "File" | "Directory" | "SymbolicLink" | "BlockDevice" | "CharacterDevice" | "FIFO" | "Socket"

/** What kind of file a stat or a directory entry describes ("Unknown": readdir could not say). */
const typeOf = (of: NFS.Stats | NFS.Dirent): FileType | "Unknown" =>
  of.isFile()
    ? "File"
    : of.isDirectory()
      ? "Directory"
      : of.isSymbolicLink()
        ? "SymbolicLink"
        : of.isBlockDevice()
          ? "BlockDevice"
          : of.isCharacterDevice()
            ? "CharacterDevice"
            : of.isFIFO()
              ? "FIFO"
              : of.isSocket()
                ? "Socket"
                : "Unknown"

/** A directory entry: its name, and its type when the file system reports one. */
export interface DirectoryEntry {
  readonly name: string
  readonly type: FileType | "Unknown"
}

const byName = (a: DirectoryEntry, b: DirectoryEntry) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)

/** The entries sorted by name (UTF-16 code units), once, as they are read. */
const toEntries = (entries: ReadonlyArray<NFS.Dirent>): ReadonlyArray<DirectoryEntry> =>
  entries.map((entry): DirectoryEntry => ({ name: entry.name, type: typeOf(entry) })).sort(byName)

/** Listings of unchanged directories, reused (stat-cache.ts); a listing weighs its entries. */
const listings = makeStatCache<ReadonlyArray<DirectoryEntry>>({
  maxPaths: 1_000,
  maxWeight: 100_000,
  weight: (entries) => entries.length
})

/**
 * The entries of a directory, sorted by name, with the types readdir reports (no stat per
 * entry). On a local mount with a real ctime, an unchanged directory's listing is reused
 * (stat-cache.ts): a stat instead of reading it. The array is then the same one each time: a
 * caller must not change it.
 */
export const readDirectoryEntries = (
  path: string
): Effect.Effect<ReadonlyArray<DirectoryEntry>, PlatformError.PlatformError> => {
  const mount = mountOf(path)
  return mount?.local === true
    ? now("readDirectory", path, () => {
        const read = () => toEntries(NFS.readdirSync(path, { withFileTypes: true }))
        if (!mount.realCtime) return read()
        const st = NFS.statSync(path, { throwIfNoEntry: false })
        // Missing or not a directory: reading says so, with the error the caller expects.
        if (st === undefined || !st.isDirectory()) return read()
        return listings.get(path, st, read)
      })
    : call<ReadonlyArray<NFS.Dirent>>("readDirectory", path, (done) =>
        NFS.readdir(path, { withFileTypes: true }, done)
      ).pipe(Effect.map(toEntries))
}

/** A file opened read-only; closed when the scope closes. */
export interface OpenFile {
  /** What it is, its size and mtime, from fstat on the open descriptor. */
  readonly stats: NFS.Stats
  readonly type: FileType | "Unknown"
  /** Reads into `buffer` from `position`; resolves with the number of bytes read (0 at the end). */
  readonly read: (buffer: Uint8Array, position: number) => Effect.Effect<number, PlatformError.PlatformError>
}

/**
 * Opens `path` for reading and fstats it: two calls where stat-then-open took two round trips,
 * for one. O_NONBLOCK makes the open itself safe on anything the path may turn out to be: a
 * FIFO does not wait for a writer, and O_NOCTTY keeps a terminal from becoming ours. The caller
 * checks `type` and reads only a regular file. (Opening a device node can still have effects
 * of its own; a path outside the project, which every device is, needs the person's approval
 * in the permission layer, which shows where a symlink really leads.)
 */
export const openForReading = (path: string): Effect.Effect<OpenFile, PlatformError.PlatformError, Scope.Scope> => {
  const local = isOnLocalMount(path)
  const flags = NFS.constants.O_RDONLY | NFS.constants.O_NONBLOCK | NFS.constants.O_NOCTTY
  return Effect.acquireRelease(
    local
      ? now("open", path, () => NFS.openSync(path, flags))
      : call<number>("open", path, (done) => NFS.open(path, flags, done)),
    (fd) =>
      Effect.sync(() => {
        try {
          NFS.closeSync(fd)
        } catch {
          // nothing was written through it: a failed close loses no data
        }
      })
  ).pipe(
    Effect.flatMap((fd) =>
      // fstat on a descriptor in hand never waits on the disk: no round trip needed.
      now("fstat", path, () => NFS.fstatSync(fd)).pipe(
        Effect.map(
          (stats): OpenFile => ({
            stats,
            type: typeOf(stats),
            read: local
              ? (buffer, position) => now("read", path, () => NFS.readSync(fd, buffer, 0, buffer.length, position))
              : (buffer, position) =>
                  call<number>("read", path, (done) => NFS.read(fd, buffer, 0, buffer.length, position, done))
          })
        )
      )
    )
  )
}

/** A file opened, fstat'ed and, when it is a small regular file, read whole. */
export interface WholeFile {
  readonly stats: NFS.Stats
  readonly type: FileType | "Unknown"
  /** Its content; undefined when it is not a regular file, is `maxBytes` or larger, or grew while read. */
  readonly bytes: Uint8Array | undefined
}

/**
 * On a local file system, one synchronous open, fstat, read and close: a small file costs four
 * system calls and no scope, no descriptor held across effects, no chunk loop. Reading size + 1
 * bytes proves the end with a short read. Undefined when the path is not on a local mount (the
 * caller then takes the streaming path, whose reads go through the thread pool).
 */
export const readWholeIfLocal = (
  path: string,
  maxBytes: number
): Effect.Effect<WholeFile, PlatformError.PlatformError> | undefined => {
  if (!isOnLocalMount(path)) return undefined
  return now("open", path, () => {
    const fd = NFS.openSync(path, NFS.constants.O_RDONLY | NFS.constants.O_NONBLOCK | NFS.constants.O_NOCTTY)
    try {
      const stats = NFS.fstatSync(fd)
      const type = typeOf(stats)
      if (type !== "File" || stats.size >= maxBytes) return { stats, type, bytes: undefined }
      const buffer = new Uint8Array(stats.size + 1)
      // A short count is the end of the file; a full buffer means it grew since the fstat.
      const read = NFS.readSync(fd, buffer, 0, buffer.length, 0)
      return { stats, type, bytes: read > stats.size ? undefined : buffer.subarray(0, read) }
    } finally {
      try {
        NFS.closeSync(fd)
      } catch {
        // read-only: a failed close loses no data
      }
    }
  })
}
