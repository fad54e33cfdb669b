/**
 * The batching rule for a program's calls, as they are made: a concurrency-safe call runs beside
 * the other safe calls made since the last mutating one (at most BATCH_CONCURRENCY at a time); a
 * mutating call waits for every call made before it and holds back every call made after it.
 * So `Promise.all([read, read, edit, read])` reads twice in parallel, then edits, then reads —
 * side effects in program order, as in a model turn's batch.
 */
import { Deferred, Effect, Semaphore } from "effect"
import { BATCH_CONCURRENCY } from "../orchestrator/batching.ts"

export interface CallOrder {
  /** Called in program order, at the moment of the call; the returned effect runs it in its turn. */
  readonly place: <A>(concurrencySafe: boolean, run: Effect.Effect<A>) => Effect.Effect<A>
}

export const makeCallOrder = (): CallOrder => {
  const permits = Semaphore.makeUnsafe(BATCH_CONCURRENCY)
  let barrier: Effect.Effect<void> = Effect.void
  let since: Array<Deferred.Deferred<void>> = []
  return {
    place: (safe, run) => {
      const finished = Deferred.makeUnsafe<void>()
      const signal = Effect.ensuring(Deferred.succeed(finished, undefined))
      if (safe) {
        const wait = barrier
        since.push(finished)
        return Effect.andThen(wait, permits.withPermits(1)(run)).pipe(signal)
      }
      const wait = Effect.andThen(barrier, Effect.forEach(since, Deferred.await, { discard: true }))
      barrier = Deferred.await(finished)
      since = []
      return Effect.andThen(wait, run).pipe(signal)
    }
  }
}
