/**
 * attempt: runs an authorized call — raced against its timeout and the person's cancel — and,
 * for a retrySafe tool, once more after a transient failure. A tool that throws is a
 * ToolFailure, never a defect.
 */
import { Duration, Effect } from "effect"
import { SessionStoreError } from "../session/store.ts"
import { type ExecuteError, type ToolError, ToolFailure, ToolInterrupted, ToolTimeout } from "../tool/errors.ts"
import { readableError } from "../tool/readable-error.ts"
import type { Tool, ToolContext, ToolOutput } from "../tool/tool.ts"
import type { CallContext } from "./context.ts"
import type { LiveOutput } from "./live.ts"

/** Retry rule: a retrySafe tool gets one more attempt after a transient failure, 200 ms × attempt later. */
export const MAX_ATTEMPTS = 2
export const RETRY_BACKOFF_MS = 200

/** What an attempt needs of its call: the live output (partial output travels with a timeout) and a counter. */
export interface AttemptRecord {
  readonly context: CallContext
  readonly live: LiveOutput
  /** Attempts made; the result reports it. */
  attempts: number
}

const describeDefect = readableError

/**
 * What a tool that threw (in execute, paths, validateInput or checkPermissions) comes back as.
 * Saved state that is busy or damaged is not a bug: its error names the file and what to do.
 */
export const defectFailure = (toolId: string, defect: unknown): ToolFailure =>
  new ToolFailure({
    message:
      defect instanceof SessionStoreError
        ? `${toolId} could not use its saved state: ${defect.message}`
        : `${toolId} failed unexpectedly (a bug in the tool, not in your call): ${describeDefect(defect)}`
  })

/** A tool that throws: a ToolFailure, never a defect. */
export const guard = <A, E>(toolId: string, effect: Effect.Effect<A, E>): Effect.Effect<A, E | ToolFailure> =>
  Effect.catchDefect(effect, (defect) => Effect.fail(defectFailure(toolId, defect)))

/** Completes when the person cancels a cancellable tool, failing with its partial output. */
const cancelledBy = (rec: AttemptRecord, t: Tool): Effect.Effect<never, ToolInterrupted> | undefined =>
  rec.context.cancelled === undefined || t.interruptBehavior === "block"
    ? undefined
    : rec.context.cancelled.pipe(
        Effect.andThen(
          Effect.suspend(() =>
            Effect.fail(
              new ToolInterrupted({
                tool: t.id,
                partialOutput: rec.live.text,
                message: `${t.id} was cancelled by the person${rec.live.size > 0 ? "; the output so far follows" : ""}.`
              })
            )
          )
        )
      )

/** `effect`, unless the person cancels first. */
const cancellable = <A, E>(rec: AttemptRecord, t: Tool, effect: Effect.Effect<A, E>) => {
  const cancelled = cancelledBy(rec, t)
  return cancelled === undefined ? effect : Effect.raceFirst(effect, cancelled)
}

/**
 * One attempt, raced against its timeout and the person's cancel in one race: a tool that
 * finishes at once forks one fiber, and neither the timer nor the cancel watch starts.
 */
const once = (
  rec: AttemptRecord,
  t: Tool,
  args: unknown,
  ctx: ToolContext,
  n: number
): Effect.Effect<ToolOutput, ExecuteError | ToolTimeout | ToolInterrupted> =>
  Effect.suspend(() => {
    rec.attempts = n
    // Built only if the tool does not finish at once (the race's second arm is forked then).
    const stopper = Effect.suspend(() => {
      const timeout = Duration.fromInputUnsafe(t.timeout(args))
      const timedOut = Effect.sleep(timeout).pipe(
        Effect.andThen(
          Effect.suspend(() =>
            Effect.fail(
              new ToolTimeout({
                tool: t.id,
                timeoutMs: Duration.toMillis(timeout),
                partialOutput: rec.live.text,
                message: `${t.id} timed out after ${Duration.format(timeout)}${t.timeoutAdvice === undefined ? "" : ` (${t.timeoutAdvice})`}${rec.live.size > 0 ? "; the output so far follows" : ""}.`
              })
            )
          )
        )
      )
      const cancelled = cancelledBy(rec, t)
      return cancelled === undefined ? timedOut : Effect.raceFirst(timedOut, cancelled)
    })
    // (A defect of the tool's ends the race; guard turns it into a ToolFailure.)
    return Effect.raceFirst(t.execute(args, ctx), stopper)
  }).pipe(
    Effect.catchTag("TransientFailure", (e) =>
      t.retrySafe && n < MAX_ATTEMPTS
        ? cancellable(rec, t, Effect.sleep(Duration.millis(RETRY_BACKOFF_MS * n))).pipe(
            Effect.andThen(once(rec, t, args, ctx, n + 1))
          )
        : Effect.fail(e)
    )
  )

/** The call's run: every attempt it takes. */
export const attempt = (
  rec: AttemptRecord,
  tool: Tool,
  args: unknown,
  ctx: ToolContext
): Effect.Effect<ToolOutput, ToolError> => guard(tool.id, once(rec, tool, args, ctx, 1))
