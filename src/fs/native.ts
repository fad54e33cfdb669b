/**
 * The native LocalFs layer: the hot-path calls made directly on node:fs, because Effect's
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
 *
 * What the layer keeps (the mount table, listings of unchanged directories, compiled
 * .gitignore files) belongs to the layer instance: two systems, or two tests, share nothing.
 */
import * as NFS from "node:fs"
import { Effect, PlatformError, type Scope } from "effect"
import { childPath } from "../path/path.ts"
import type { CheckedEntry } from "../tool/tool.ts"
import { onBindMount } from "./bind-mounts.ts"
import { fillUnknownTypes } from "./entry-types.ts"
import type {
  DerivedSpec,
  DirectoryEntry,
  FileStats,
  FileType,
  LocalFsShape,
  OpenFile,
  PathInfo,
  WholeFile
} from "./local-fs-shape.ts"
import { type Mount, makeMountLookup, readMountTable } from "./local-mounts.ts"
import { makeStatCache, type StatCache } from "./stat-cache.ts"

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

/** What kind of file a stat or a directory entry describes ("Unknown": readdir could not say). */
const typeOf = (of: NFS.Stats | NFS.Dirent): FileType =>
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

const byName = (a: DirectoryEntry, b: DirectoryEntry) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)

/** The entries sorted by name (UTF-16 code units), once, as they are read. */
const toEntries = (entries: ReadonlyArray<NFS.Dirent>): ReadonlyArray<DirectoryEntry> =>
  entries.map((entry): DirectoryEntry => ({ name: entry.name, type: typeOf(entry) })).sort(byName)

/** What is known of a file opened as `fd`: with its identity, and whether it sits on a bind mount. */
const statsOf = (st: NFS.Stats, fd: number): FileStats => ({
  type: typeOf(st),
  size: st.size,
  mtimeMs: st.mtimeMs,
  identity: { dev: st.dev, ino: st.ino, links: st.nlink, mounted: onBindMount(fd) }
})

const closeQuietly = (fd: number) => {
  try {
    NFS.closeSync(fd)
  } catch {
    // read-only: a failed close loses no data
  }
}

/**
 * O_NONBLOCK makes the open itself safe on anything the path may turn out to be: a FIFO does
 * not wait for a writer, and O_NOCTTY keeps a terminal from becoming ours. (Opening a device
 * node can still have effects of its own; a path outside the project, which every device is,
 * needs the person's approval in the permission layer, which shows where a symlink leads.)
 */
const READ_FLAGS = NFS.constants.O_RDONLY | NFS.constants.O_NONBLOCK | NFS.constants.O_NOCTTY

/**
 * Undefined when the open descriptor `fd` is the file at `expected` (a real path, as a check
 * resolved it); else what was opened instead. On Linux the descriptor's own path
 * (/proc/self/fd/N: where the kernel really opened, every link followed), so a path flipped to a
 * link, or a folder on the way swapped for one, between the check and the open is caught. Without
 * /proc: the descriptor's device and inode against `expected`'s own entry, links not followed.
 */
const movedFrom = (fd: number, expected: string, st: NFS.Stats): string | undefined => {
  let at: string | undefined
  try {
    at = NFS.readlinkSync(`/proc/self/fd/${fd}`)
  } catch {
    at = undefined
  }
  if (at !== undefined) return at === expected ? undefined : at
  try {
    const entry = NFS.lstatSync(expected)
    return entry.dev === st.dev && entry.ino === st.ino ? undefined : "another file"
  } catch {
    return "another file"
  }
}

export interface NativeFsOptions {
  /** The mount table; default: this machine's (local-mounts.ts). `[]`: every call takes the pool. */
  readonly mounts?: ReadonlyArray<Mount>
  /** The clock of the caches' racy window (tests move it). */
  readonly now?: () => number
}

export const makeNativeFs = (options: NativeFsOptions = {}): LocalFsShape => {
  const mountOf = makeMountLookup(options.mounts ?? readMountTable())
  const isLocal = (path: string) => mountOf(path)?.local === true
  const clock = options.now === undefined ? {} : { now: options.now }
  /** Listings of unchanged directories, reused (stat-cache.ts); a listing weighs its entries. */
  const listings = makeStatCache<ReadonlyArray<DirectoryEntry>>({
    maxPaths: 1_000,
    maxWeight: 100_000,
    weight: (entries) => entries.length,
    ...clock
  })
  const derived = new Map<DerivedSpec<unknown>, StatCache<unknown>>()
  const derivedCache = <V>(spec: DerivedSpec<V>): StatCache<V> => {
    let cache = derived.get(spec as DerivedSpec<unknown>)
    if (cache === undefined) {
      cache = makeStatCache<unknown>({ maxPaths: spec.maxPaths, maxWeight: spec.maxPaths, weight: () => 1, ...clock })
      derived.set(spec as DerivedSpec<unknown>, cache)
    }
    return cache as StatCache<V>
  }

  /** The type of an entry readdir could not type (entry-types.ts), as each path reads it. */
  const lstatNow = (path: string) => now("lstat", path, () => typeOf(NFS.lstatSync(path)))
  const lstatInPool = (path: string) =>
    Effect.map(
      call<NFS.Stats>("lstat", path, (done) => NFS.lstat(path, done)),
      typeOf
    )

  const realPath = (path: string): Effect.Effect<string, PlatformError.PlatformError> =>
    isLocal(path)
      ? now("realPath", path, () => NFS.realpathSync.native(path, "utf8"))
      : call<string>("realPath", path, (done) => NFS.realpath.native(path, "utf8", done))

  const infoOf = (st: NFS.Stats): PathInfo => ({ type: typeOf(st), owner: st.uid })
  const stat = (path: string): Effect.Effect<PathInfo, PlatformError.PlatformError> =>
    isLocal(path)
      ? now("stat", path, () => infoOf(NFS.statSync(path)))
      : Effect.map(
          call<NFS.Stats>("stat", path, (done) => NFS.stat(path, done)),
          infoOf
        )

  const linkFreeBelow = (base: string, path: string): boolean => {
    if (!isLocal(path)) return false
    const from = base === "/" ? 0 : base.length
    for (let end = path.indexOf("/", from + 1); ; end = path.indexOf("/", end + 1)) {
      let info: NFS.Stats | undefined
      try {
        info = NFS.lstatSync(end === -1 ? path : path.slice(0, end), { throwIfNoEntry: false })
      } catch {
        return false
      }
      if (info === undefined || info.isSymbolicLink()) return false
      if (end === -1) return true
    }
  }

  /**
   * On a local mount with a real ctime, an unchanged directory's listing is reused
   * (stat-cache.ts): a stat instead of reading it. The cache keeps the listing as readdir gave
   * it; untyped entries (a file system without d_type) are typed on every answer.
   */
  const readDirectory = (path: string): Effect.Effect<ReadonlyArray<DirectoryEntry>, PlatformError.PlatformError> => {
    const mount = mountOf(path)
    return mount?.local === true
      ? now("readDirectory", path, () => {
          const read = () => toEntries(NFS.readdirSync(path, { withFileTypes: true }))
          if (!mount.realCtime) return read()
          const st = NFS.statSync(path, { throwIfNoEntry: false })
          // Missing or not a directory: reading says so, with the error the caller expects.
          if (st === undefined || !st.isDirectory()) return read()
          return listings.get(path, st, read)
        }).pipe(Effect.flatMap((entries) => fillUnknownTypes(path, entries, lstatNow)))
      : call<ReadonlyArray<NFS.Dirent>>("readDirectory", path, (done) =>
          NFS.readdir(path, { withFileTypes: true }, done)
        ).pipe(Effect.flatMap((entries) => fillUnknownTypes(path, toEntries(entries), lstatInPool)))
  }

  /** Open and fstat: two calls where stat-then-open took two round trips, for one. */
  const openForReading = (
    path: string,
    expected?: string
  ): Effect.Effect<OpenFile, PlatformError.PlatformError, Scope.Scope> => {
    const local = isLocal(path)
    return Effect.acquireRelease(
      local
        ? now("open", path, () => NFS.openSync(path, READ_FLAGS))
        : call<number>("open", path, (done) => NFS.open(path, READ_FLAGS, done)),
      (fd) => Effect.sync(() => closeQuietly(fd))
    ).pipe(
      Effect.flatMap((fd) =>
        // fstat on a descriptor in hand never waits on the disk: no round trip needed.
        now("fstat", path, () => NFS.fstatSync(fd)).pipe(
          Effect.map((st): OpenFile => {
            const moved = expected === undefined ? undefined : movedFrom(fd, expected, st)
            if (moved !== undefined) return { stats: statsOf(st, fd), moved, read: () => Effect.succeed(0) }
            return {
              stats: statsOf(st, fd),
              read: local
                ? (buffer, position) => now("read", path, () => NFS.readSync(fd, buffer, 0, buffer.length, position))
                : (buffer, position) =>
                    call<number>("read", path, (done) => NFS.read(fd, buffer, 0, buffer.length, position, done))
            }
          })
        )
      )
    )
  }

  /**
   * On a local mount, one synchronous open, fstat, read and close: a small file costs four
   * system calls and no scope, no descriptor held across effects, no chunk loop. Reading size + 1
   * bytes proves the end with a short read. Elsewhere undefined: the caller streams, through the pool.
   */
  const readWhole = (
    path: string,
    maxBytes: number,
    expected?: string
  ): Effect.Effect<WholeFile, PlatformError.PlatformError> | undefined =>
    isLocal(path)
      ? now("open", path, () => {
          const fd = NFS.openSync(path, READ_FLAGS)
          try {
            const st = NFS.fstatSync(fd)
            const stats = statsOf(st, fd)
            const moved = expected === undefined ? undefined : movedFrom(fd, expected, st)
            if (moved !== undefined) return { stats, bytes: undefined, moved }
            if (stats.type !== "File" || st.size >= maxBytes) return { stats, bytes: undefined }
            const buffer = new Uint8Array(st.size + 1)
            // A short count is the end of the file; a full buffer means it grew since the fstat.
            const read = NFS.readSync(fd, buffer, 0, buffer.length, 0)
            return { stats, bytes: read > st.size ? undefined : buffer.subarray(0, read) }
          } finally {
            closeQuietly(fd)
          }
        })
      : undefined

  const readFile = (path: string): Effect.Effect<Uint8Array, PlatformError.PlatformError> =>
    isLocal(path)
      ? now("readFile", path, () => NFS.readFileSync(path))
      : call<Uint8Array>("readFile", path, (done) => NFS.readFile(path, done))

  /**
   * On a local disk with a real ctime, read at once: a stat, not a failed read, says there is
   * none (the usual case for an ancestor's .gitignore), and an unchanged file is not derived again.
   */
  const readDerived = <V>(dir: string, name: string, spec: DerivedSpec<V>): Effect.Effect<V | undefined> => {
    const file = childPath(dir, name)
    const mount = mountOf(file)
    if (mount?.realCtime === true) {
      return Effect.sync(() => {
        try {
          const st = NFS.statSync(file, { throwIfNoEntry: false })
          if (st === undefined || !st.isFile()) return undefined
          return derivedCache(spec).get(file, st, () => spec.derive(dir, NFS.readFileSync(file, "utf8")))
        } catch {
          return undefined
        }
      })
    }
    const read: Effect.Effect<string, PlatformError.PlatformError> =
      mount?.local === true
        ? now("readFile", file, () => NFS.readFileSync(file, "utf8"))
        : call<string>("readFile", file, (done) => NFS.readFile(file, "utf8", done))
    return read.pipe(
      Effect.map((text): V | undefined => spec.derive(dir, text)),
      Effect.catch(() => Effect.succeed(undefined))
    )
  }

  const readLink = (path: string): Effect.Effect<string | undefined> =>
    Effect.sync(() => {
      try {
        return NFS.readlinkSync(path)
      } catch {
        return undefined
      }
    })

  const entryOf = (path: string): CheckedEntry | null => {
    try {
      const st = NFS.lstatSync(path, { throwIfNoEntry: false })
      return st === undefined ? null : { dev: st.dev, ino: st.ino, mode: st.mode }
    } catch {
      // ENOTDIR and the like: nothing a write could change is there.
      return null
    }
  }

  return {
    onDisk: true,
    entryOf,
    realPath,
    linkFreeBelow,
    stat,
    readLink,
    readDirectory,
    openForReading,
    readWhole,
    readFile,
    readDerived
  }
}
