/**
 * "A positive integer setting", checked in one place: FREECODE_OUTPUT_*, FREECODE_HISTORY_MAX_CHARS,
 * FREECODE_SESSIONS_MAX, FREECODE_SESSION_IDLE_MS… A value that is set but unusable is an
 * InvalidSetting naming it, never silently replaced by the default.
 */
import { Config, Effect, Option, Schema } from "effect"

/** A setting that is present but unusable. */
export class InvalidSetting extends Schema.TaggedError<InvalidSetting>()("InvalidSetting", {
  name: Schema.String,
  message: Schema.String
}) {}

/** The setting `name` as a positive integer; undefined when it is not set. */
export const positiveInt = (name: string): Effect.Effect<number | undefined, InvalidSetting> =>
  Effect.flatMap(
    Effect.orElseSucceed(Config.option(Config.String(name)), () => Option.none<string>()),
    (set) => {
      if (Option.isNone(set)) return Effect.succeed(undefined)
      const text = set.value.trim()
      const n = Number(text)
      return text !== "" && Number.isSafeInteger(n) && n > 0
        ? Effect.succeed(n)
        : Effect.fail(new InvalidSetting({ name, message: `${name} must be a positive integer, got ${set.value}` }))
    }
  )

/** The setting `name` as a positive integer, `fallback` when it is not set. */
export const positiveIntOr = (name: string, fallback: number): Effect.Effect<number, InvalidSetting> =>
  Effect.map(positiveInt(name), (n) => n ?? fallback)
