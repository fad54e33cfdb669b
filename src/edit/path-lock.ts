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
import { realPath } from "../permission/containment.ts"
import { acquireFileLock, releaseFileLock } from "./file-lock.ts"
import { recoverStaging } from "./staging.ts"

interface Entry {
  readonly semaphore: Semaphore.Semaphore
  users: number
}

const locks = new Map<string, Entry>()

/** Recovery of a staging folder, one process at a time (under a lock of its own). */
export const recoverExclusively = (staging: string): Effect.Effect<void> =>
  Effect.acquireUseRelease(
    acquireFileLock(`staging:${staging}`, "", () => Effect.void),
    () => recoverStaging(staging),
    releaseFileLock
  ).pipe(Effect.ignore)

const withPathLock = <A, E, R>(
  path: string,
  staging: string | undefined,
  effect: Effect.Effect<A, E, R>
): Effect.Effect<A, E | PlatformError.PlatformError, R> =>
  Effect.acquireUseRelease(
    Effect.sync(() => {
      let entry = locks.get(path)
      if (entry === undefined) {
        entry = { semaphore: Semaphore.makeUnsafe(1), users: 0 }
        locks.set(path, entry)
      }
      entry.users++
      return entry
    }),
    (entry) =>
      Semaphore.withPermit(
        entry.semaphore,
        Effect.acquireUseRelease(
          acquireFileLock(path, staging ?? "", recoverExclusively),
          () => effect,
          releaseFileLock
        )
      ),
    (entry) =>
      Effect.sync(() => {
        entry.users--
        if (entry.users === 0) locks.delete(path)
      })
  )

/**
 * Runs `effect` holding the locks of all `paths` (keyed by where each really leads), taken in
 * sorted order. `staging` is the caller's staging folder, named in its lock files so that a
 * process that finds the caller dead can finish or undo what it left there.
 */
export const withPathLocks = <A, E, R>(
  paths: ReadonlyArray<string>,
  staging: string | undefined,
  effect: Effect.Effect<A, E, R>
): Effect.Effect<A, E | PlatformError.PlatformError, R | FileSystem.FileSystem> =>
  Effect.flatMap(FileSystem.FileSystem, (fs) =>
    Effect.flatMap(
      Effect.forEach(paths, (p) => realPath(fs, p)),
      (reals) =>
        [...new Set(reals)]
          .sort()
          .reduceRight<Effect.Effect<A, E | PlatformError.PlatformError, R>>(
            (inner, path) => withPathLock(path, staging, inner),
            effect
          )
    )
  )

/** How many paths currently have a lock entry (for tests: entries do not leak). */
export const heldLocks = (): number => locks.size
