/**
 * One writer per file, across processes: every read-modify-write of a file runs under its real
 * path's lock — first this process's (a semaphore, so its own calls queue without touching the
 * disk), then the machine's (file-lock.ts: an O_EXCL lock file every process honours). Two edits
 * of one file, from one process or two, through a symlinked folder or the real one, apply one
 * after the other: the second loads the file under the lock and sees the first's result (or
 * fails cleanly if its text is gone). Different files do not wait for each other; several are
 * locked in sorted order, the same in every process, so no two calls deadlock.
 */
import { Effect, FileSystem, type PlatformError, Semaphore } from "effect"
import { type RealPaths, realPath } from "../permission/containment.ts"
import { acquireFileLock, releaseFileLock } from "./file-lock.ts"
import { recoverStaging } from "./staging.ts"

interface Entry {
  readonly semaphore: Semaphore.Semaphore
  users: number
}

/**
 * A table of locks keyed by path, each a semaphore of one permit, dropped when nobody holds or
 * waits for it. The machine-wide layer wraps each permit in a lock file; an in-process file
 * system (write-platform.ts) needs only the table.
 */
export const makeLockTable = () => {
  const locks = new Map<string, Entry>()
  const withLock = <A, E, R>(key: string, effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
    Effect.acquireUseRelease(
      Effect.sync(() => {
        let entry = locks.get(key)
        if (entry === undefined) {
          entry = { semaphore: Semaphore.makeUnsafe(1), users: 0 }
          locks.set(key, entry)
        }
        entry.users++
        return entry
      }),
      (entry) => Semaphore.withPermit(entry.semaphore, effect),
      (entry) =>
        Effect.sync(() => {
          entry.users--
          if (entry.users === 0) locks.delete(key)
        })
    )
  /** Runs `effect` holding every key's lock, taken in sorted order (so no two callers deadlock). */
  const withLocks = <A, E, R>(
    keys: ReadonlyArray<string>,
    lockOne: (key: string, inner: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>,
    effect: Effect.Effect<A, E, R>
  ): Effect.Effect<A, E, R> =>
    [...new Set(keys)].sort().reduceRight<Effect.Effect<A, E, R>>((inner, key) => lockOne(key, inner), effect)
  return { withLock, withLocks, size: () => locks.size }
}

/** This process's table: one for every tool system in it, since the lock files are the machine's. */
const processLocks = makeLockTable()

/** Recovery of a staging folder, one process at a time (under a lock of its own). */
export const recoverExclusively = (staging: string): Effect.Effect<void> =>
  Effect.acquireUseRelease(
    acquireFileLock(`staging:${staging}`, "", () => Effect.void),
    () => recoverStaging(staging),
    releaseFileLock
  ).pipe(Effect.ignore)

const withPathLock = <A, E, R>(
  staging: string | undefined,
  path: string,
  effect: Effect.Effect<A, E, R>
): Effect.Effect<A, E | PlatformError.PlatformError, R> =>
  processLocks.withLock(
    path,
    Effect.acquireUseRelease(acquireFileLock(path, staging ?? "", recoverExclusively), () => effect, releaseFileLock)
  )

/**
 * Runs `effect` holding the locks of all `paths` (keyed by where each really leads, as `fs`
 * says), taken in sorted order. `staging` is the caller's staging folder, named in its lock
 * files so that a process that finds the caller dead can finish or undo what it left there.
 */
export const withPathLocksOn = <A, E, R>(
  fs: RealPaths,
  paths: ReadonlyArray<string>,
  staging: string | undefined,
  effect: Effect.Effect<A, E, R>
): Effect.Effect<A, E | PlatformError.PlatformError, R> =>
  Effect.flatMap(
    Effect.forEach(paths, (p) => realPath(fs, p)),
    (reals) =>
      processLocks.withLocks<A, E | PlatformError.PlatformError, R>(
        reals,
        (key, inner) => withPathLock(staging, key, inner),
        effect
      )
  )

/** withPathLocksOn with the FileSystem in context. */
export const withPathLocks = <A, E, R>(
  paths: ReadonlyArray<string>,
  staging: string | undefined,
  effect: Effect.Effect<A, E, R>
): Effect.Effect<A, E | PlatformError.PlatformError, R | FileSystem.FileSystem> =>
  Effect.flatMap(FileSystem.FileSystem, (fs) => withPathLocksOn(fs, paths, staging, effect))

/** How many paths currently have a lock entry (for tests: entries do not leak). */
export const heldLocks = (): number => processLocks.size()
