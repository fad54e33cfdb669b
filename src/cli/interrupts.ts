/**
 * Ctrl-C during `call` and `run`. The first SIGINT does not kill the process: it completes the
 * `cancelled` effect the CLI passes in every CallContext, so cancellable tools stop and return
 * status "interrupted" with their partial output, and the results are still written whole.
 * A second SIGINT exits at once (130).
 */
import { Context, Deferred, Effect, Exit, Layer, type Scope } from "effect"
import { EXIT_INTERRUPTED } from "./errors.ts"

/** One listening period. */
export interface Cancellation {
  /** Completes on the first interrupt (and at once for every wait after it). */
  readonly cancelled: Effect.Effect<void>
  /** Whether an interrupt has come. */
  readonly requested: Effect.Effect<boolean>
}

const fromDeferred = (deferred: Deferred.Deferred<void>): Cancellation => ({
  cancelled: Deferred.await(deferred),
  requested: Deferred.isDone(deferred)
})

export class Interrupts extends Context.Service<
  Interrupts,
  {
    /** Listens while the scope is open. */
    readonly listen: Effect.Effect<Cancellation, never, Scope.Scope>
  }
>()("freecode/cli/Interrupts") {
  static readonly layerSigint = Layer.succeed(
    Interrupts,
    Interrupts.of({
      listen: Effect.gen(function* () {
        const cancelled = yield* Deferred.make<void>()
        let count = 0
        const onSigint = () => {
          count++
          if (count > 1) process.exit(EXIT_INTERRUPTED)
          process.stderr.write("freecode-tools: cancelling; press Ctrl-C again to exit now\n")
          Deferred.doneUnsafe(cancelled, Exit.void)
        }
        yield* Effect.acquireRelease(
          Effect.sync(() => process.on("SIGINT", onSigint)),
          () => Effect.sync(() => process.off("SIGINT", onSigint))
        )
        return fromDeferred(cancelled)
      })
    })
  )

  /** For tests: cancellation happens when `trigger` completes. */
  static readonly layerFrom = (trigger: Deferred.Deferred<void>) =>
    Layer.succeed(Interrupts, Interrupts.of({ listen: Effect.succeed(fromDeferred(trigger)) }))
}
