/**
 * One writer per path: every read-modify-write of a file runs under that path's lock, so two
 * edits of one file apply one after the other (the second sees the first's result) and no
 * update is lost. Different paths do not wait for each other. Locks are process-wide (files
 * are), and an entry is dropped when nobody holds or waits for it.
 */
import { Effect, Semaphore } from "effect"
import { realPath } from "../permission/containment.ts"

interface Entry {
  readonly semaphore: Semaphore.Semaphore
  users: number
}

const locks = new Map<string, Entry>()

const withPathLock = <A, E, R>(path: string, effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
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
    (entry) => Semaphore.withPermit(entry.semaphore, effect),
    (entry) =>
      Effect.sync(() => {
        entry.users--
        if (entry.users === 0) locks.delete(path)
      })
  )

/**
 * Runs `effect` holding the locks of all `paths`, taken in sorted order (no deadlock). A lock is
 * keyed by where the path really leads, so one file reached through a symlinked folder and
 * through its real folder is still one writer at a time.
 */
export const withPathLocks = <A, E, R>(
  paths: ReadonlyArray<string>,
  effect: Effect.Effect<A, E, R>
): Effect.Effect<A, E, R> =>
  Effect.flatMap(Effect.forEach(paths, realPath), (reals) =>
    [...new Set(reals)].sort().reduceRight((inner, path) => withPathLock(path, inner), effect)
  )

/** How many paths currently have a lock entry (for tests: entries do not leak). */
export const heldLocks = (): number => locks.size
