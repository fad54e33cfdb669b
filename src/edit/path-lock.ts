/**
 * One writer per file, across processes: a write's targets are locked by their real paths with
 * lock files every process on the machine honours (file-lock.ts), taken in sorted order, the
 * same in every process, so no two calls deadlock. Within the process the write already holds
 * ReadState.withPathLock of each target (write-transaction.ts), so its own calls queue on a
 * semaphore without touching the disk and only one of them waits here for another process.
 */
import { Effect, type PlatformError } from "effect"
import { type RealPaths, realPath } from "../permission/containment.ts"
import { withEach } from "../process-wide/lock-table.ts"
import { acquireFileLock, releaseFileLock } from "./file-lock.ts"
import { recoverStaging } from "./staging.ts"

/** Recovery of a staging folder, one process at a time (under a lock of its own). */
export const recoverExclusively = (staging: string): Effect.Effect<void> =>
  Effect.acquireUseRelease(
    acquireFileLock(`staging:${staging}`, "", () => Effect.void),
    () => recoverStaging(staging),
    releaseFileLock
  ).pipe(Effect.ignore)

const withFileLock = <A, E, R>(
  staging: string | undefined,
  path: string,
  effect: Effect.Effect<A, E, R>
): Effect.Effect<A, E | PlatformError.PlatformError, R> =>
  Effect.acquireUseRelease(acquireFileLock(path, staging ?? "", recoverExclusively), () => effect, releaseFileLock)

/**
 * Runs `effect` holding the machine-wide locks of all `paths` (keyed by where each really
 * leads, as `fs` says), taken in sorted order. `staging` is the caller's staging folder, named
 * in its lock files so that a process that finds the caller dead can finish or undo what it
 * left there.
 */
export const withFileLocksOn = <A, E, R>(
  fs: RealPaths,
  paths: ReadonlyArray<string>,
  staging: string | undefined,
  effect: Effect.Effect<A, E, R>
): Effect.Effect<A, E | PlatformError.PlatformError, R> =>
  Effect.flatMap(
    Effect.forEach(paths, (p) => realPath(fs, p)),
    (reals) =>
      withEach<A, E | PlatformError.PlatformError, R>(reals, (key, inner) => withFileLock(staging, key, inner), effect)
  )
