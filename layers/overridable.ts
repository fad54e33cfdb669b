/**
 * How the tool system lets an embedder replace any of its services: each default is built
 * only when the context the system is built in does not already hold that service. So
 * `ToolSystem.layer({ root }).pipe(Layer.provide(myStore))` gives the system `myStore`, and
 * every service that uses an OutputStore (the orchestrator, the `output` tool) gets that one.
 *
 * Without this, providing a layer from outside cannot reach inside: a composition that
 * builds its own OutputStore hands it to the orchestrator when it is built, and an outer
 * store only shadows it in the context the caller sees (the orchestrator never puts there).
 */
import { type Context, Effect, Layer } from "effect"

/** `layer`, unless the context already holds `tag`'s service: then that one, as it is. */
export const overridable = <I, S, E, R>(tag: Context.Key<I, S>, layer: Layer.Layer<I, E, R>): Layer.Layer<I, E, R> =>
  Layer.unwrap(
    Effect.map(Effect.serviceOption(tag), (given) =>
      given._tag === "Some" ? (Layer.succeed(tag, given.value) as Layer.Layer<I, E, R>) : layer
    )
  )

/**
 * The same for a `Context.Reference`, which every context holds (its default when nobody gave
 * one): a value other than the default counts as given.
 */
export const overridableReference = <S, E, R>(
  ref: Context.Reference<S>,
  layer: Layer.Layer<never, E, R>
): Layer.Layer<never, E, R> =>
  Layer.unwrap(
    Effect.gen(function* () {
      const value = yield* ref
      return value !== ref.defaultValue() ? (Layer.succeed(ref, value) as Layer.Layer<never, E, R>) : layer
    })
  )
