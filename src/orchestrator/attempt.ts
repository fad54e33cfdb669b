/**
 * attempt: runs an authorized call — raced against its timeout and the person's cancel — and,
 * for a retrySafe tool, once more after a transient failure. Returns the outcome and how many
 * attempts it took. A tool that throws is a ToolFailure, never a defect.
 */
import { Duration, Effect, Result } from "effect"
import { type ExecuteError, type ToolError, ToolInterrupted, ToolTimeout } from "../tool/errors.ts"
import type { Tool, ToolContext, ToolOutput } from "../tool/tool.ts"
import type { CallContext } from "./context.ts"
import { guard } from "./defect.ts"
import type { LiveOutput } from "./live.ts"

export { defectFailure, guard } from "./defect.ts"

/** Retry rule: a retrySafe tool gets one more attempt after a transient failure, 200 ms × attempt later. */
export const MAX_ATTEMPTS = 2
export const RETRY_BACKOFF_MS = 200

export type Outcome = Result.Result<ToolOutput, ToolError>

/** What the attempt stage hands on: the outcome, and the attempts it took. */
export interface Attempted {
  readonly outcome: Outcome
  readonly attempts: number
}

/** Completes when the person cancels a cancellable tool, failing with its partial output. */
const cancelledBy = (
  context: CallContext,
  live: LiveOutput,
  t: Tool
): Effect.Effect<never, ToolInterrupted> | undefined =>
  context.cancelled === undefined || t.interruptBehavior === "block"
    ? undefined
    : context.cancelled.pipe(
        Effect.andThen(
          Effect.suspend(() =>
            Effect.fail(
              new ToolInterrupted({
                tool: t.id,
                partialOutput: live.text(),
                message: `${t.id} was cancelled by the person${live.size() > 0 ? "; the output so far follows" : ""}.`
              })
            )
          )
        )
      )

/**
 * One attempt, raced against its timeout and the person's cancel in one race: a tool that
 * finishes at once forks one fiber, and neither the timer nor the cancel watch starts.
 */
const race = (
  context: CallContext,
  live: LiveOutput,
  t: Tool,
  args: unknown,
  ctx: ToolContext
): Effect.Effect<ToolOutput, ExecuteError | ToolTimeout | ToolInterrupted> => {
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
              partialOutput: live.text(),
              message: `${t.id} timed out after ${Duration.format(timeout)}${t.timeoutAdvice === undefined ? "" : ` (${t.timeoutAdvice})`}${live.size() > 0 ? "; the output so far follows" : ""}.`
            })
          )
        )
      )
    )
    const cancelled = cancelledBy(context, live, t)
    return cancelled === undefined ? timedOut : Effect.raceFirst(timedOut, cancelled)
  })
  // (A defect of the tool's ends the race; guard turns it into a ToolFailure.)
  return guard(
    t.id,
    Effect.suspend(() => Effect.raceFirst(t.execute(args, ctx), stopper))
  )
}

/** The call's run: every attempt it takes, and what came of the last. */
export const attempt = (
  context: CallContext,
  live: LiveOutput,
  tool: Tool,
  args: unknown,
  ctx: ToolContext
): Effect.Effect<Attempted> => {
  const from = (n: number): Effect.Effect<Attempted> =>
    Effect.matchEffect(race(context, live, tool, args, ctx), {
      onSuccess: (output) => Effect.succeed({ outcome: Result.succeed(output), attempts: n }),
      onFailure: (error): Effect.Effect<Attempted> => {
        if (error._tag !== "TransientFailure" || !tool.retrySafe || n >= MAX_ATTEMPTS)
          return Effect.succeed({ outcome: Result.fail(error), attempts: n })
        const backoff = Effect.sleep(Duration.millis(RETRY_BACKOFF_MS * n))
        const cancelled = cancelledBy(context, live, tool)
        const wait = cancelled === undefined ? backoff : Effect.raceFirst(backoff, cancelled)
        return Effect.matchEffect(wait, {
          onSuccess: () => from(n + 1),
          onFailure: (stopped) => Effect.succeed({ outcome: Result.fail(stopped), attempts: n })
        })
      }
    })
  return from(1)
}
