/**
 * A table of locks keyed by a string (a real path), each a semaphore of one permit, its entry
 * dropped when nobody holds or waits for it. Several keys are taken in sorted order, the same
 * in every caller, so no two callers deadlock.
 */
import { Effect, Semaphore } from "effect"

interface Entry {
  readonly semaphore: Semaphore.Semaphore
  users: number
}

export interface LockTable {
  /** Runs `effect` holding `key`'s lock. */
  readonly withLock: <A, E, R>(key: string, effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
  /** How many keys have an entry (held or waited for): none leak. */
  readonly size: () => number
  /** Drops every entry; only when nothing holds or waits (between tests). */
  readonly clear: () => void
}

export const makeLockTable = (): LockTable => {
  const locks = new Map<string, Entry>()
  return {
    withLock: (key, effect) =>
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
            if (entry.users === 0 && locks.get(key) === entry) locks.delete(key)
          })
      ),
    size: () => locks.size,
    clear: () => locks.clear()
  }
}

/**
 * Runs `effect` holding each key's lock as `lockOne` takes it, in sorted order and each key
 * once (so no two callers deadlock, and a key named twice is not waited for by its holder).
 */
export const withEach = <A, E, R>(
  keys: ReadonlyArray<string>,
  lockOne: (key: string, inner: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>,
  effect: Effect.Effect<A, E, R>
): Effect.Effect<A, E, R> =>
  keys.length === 1
    ? lockOne(keys[0]!, effect)
    : [...new Set(keys)].sort().reduceRight<Effect.Effect<A, E, R>>((inner, key) => lockOne(key, inner), effect)
