/**
 * The stages after a call's verdict, for every outcome — ran, refused, or never resolved:
 * record (the FULL output into the store) → shape (the model's and the UI's copies) → the
 * PostToolUse hooks, whose text the shape stage joins in within the same budget → the one
 * ToolResult builder → publish. Each takes the value the one before returned.
 * Hand-chained: every call passes through here (docs/architecture.md, "No generator on the
 * per-call path").
 */
import { Effect, Result } from "effect"
import type { ToolEvents } from "../events/events.ts"
import type { Hooks } from "../hooks/hooks.ts"
import { failedCall } from "../output/compress/index.ts"
import type { OutputStore } from "../output/store.ts"
import type { ToolResult } from "../tool/result.ts"
import type { Tool } from "../tool/tool.ts"
import type { Outcome } from "./attempt.ts"
import type { GateState } from "./authorize.ts"
import type { CallContext } from "./context.ts"
import type { Shaped } from "./cut.ts"
import type { LiveOutput } from "./live.ts"
import { afterHooks, type EventBase, type EventSink, publishResult } from "./publish.ts"
import { type Recorded, record } from "./record.ts"
import { buildResult } from "./result.ts"
import { joinHooks, type ShapeInput, type ShapeSettings, shapeOutput } from "./shape.ts"

/** What the path holds for the whole of one call, from the moment it is opened. */
export interface Opened {
  readonly context: CallContext
  readonly callId: string
  /** When the call arrived (the clock's milliseconds). */
  readonly started: number
  readonly base: EventBase
  readonly live: LiveOutput
  /** Undefined for a call that never resolved to a tool. */
  readonly tool: Tool | undefined
}

/** What the stages before hand to these: the outcome, and what the result says about how it came. */
export interface Ending {
  readonly outcome: Outcome
  readonly attempts: number
  /** The output kind the tool declared, for a call that ran. */
  readonly outputKind: string | undefined
  /** What the path adds to the tool's own metadata (coercedArgs, permission, hooks, via…). */
  readonly metadata: Readonly<Record<string, unknown>>
  /** For a call that ran: the hooks to run after it, with what the gates found. */
  readonly after: { readonly hooks: Hooks["Service"] | undefined; readonly state: GateState } | undefined
}

/** What these stages use of the system. */
export interface Finishing {
  readonly root: string
  readonly store: OutputStore["Service"]
  readonly events: ToolEvents["Service"]
  readonly sink: EventSink
  readonly shaping: ShapeSettings
  readonly now: () => number
}

export const conclude = (env: Finishing, opened: Opened, ending: Ending): Effect.Effect<ToolResult> => {
  const { outcome, outputKind, metadata } = ending
  const { context, callId, base } = opened
  const shapeInput: ShapeInput = {
    sessionId: context.sessionId,
    callId,
    tool: opened.tool,
    outputKind,
    failed: failedCall(Result.isFailure(outcome), Result.isSuccess(outcome) ? outcome.success.metadata : undefined)
  }
  const build = (recorded: Recorded, shaped: Shaped, extra: Readonly<Record<string, unknown>>) =>
    buildResult({
      callId,
      tool: base.tool,
      outcome,
      recorded,
      shaped,
      metadata: outputKind === undefined ? extra : { outputKind, ...extra },
      attempts: ending.attempts,
      durationMs: env.now() - opened.started
    })
  const published = (result: ToolResult): Effect.Effect<ToolResult> =>
    env.events.listening() ? Effect.as(publishResult(env.sink, base, result), result) : Effect.succeed(result)
  const shapedThen = (recorded: Recorded, shaped: Shaped): Effect.Effect<ToolResult> => {
    const result = build(recorded, shaped, metadata)
    const after = ending.after
    if (after === undefined) return published(result)
    const { state } = after
    const inputs = {
      hooks: after.hooks,
      root: env.root,
      input: state.invocation.input,
      notes: state.notes,
      outcomes: state.outcomes
    }
    // The hooks' text joins before the budget: the shape stage writes the model's copy last.
    return Effect.flatMap(afterHooks(inputs, context.sessionId, result, context.parentCallId), (words) =>
      words.texts.length === 0 && words.outcomes.length === 0
        ? published(result)
        : Effect.flatMap(joinHooks(env.shaping, shapeInput, recorded, shaped, words.texts), (joined) =>
            published(
              build(recorded, joined, words.outcomes.length === 0 ? metadata : { ...metadata, hooks: words.outcomes })
            )
          )
    )
  }
  const stored = Effect.flatMap(
    record(env.store, { sessionId: context.sessionId, callId, tool: base.tool, live: opened.live }, outcome),
    (recorded) =>
      Effect.flatMap(shapeOutput(env.shaping, shapeInput, recorded), (shaped) => shapedThen(recorded, shaped))
  )
  // Most tools emit nothing: there is no writer to settle.
  return opened.live.active() ? Effect.andThen(opened.live.settle(), stored) : stored
}
