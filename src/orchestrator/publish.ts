/**
 * publish: a finished call reaches the outside. PostToolUse hooks see it first (their feedback,
 * and PreToolUse context, join the model's copy); then the UI's copy goes out as `tool_output`
 * windows and the result as `tool_complete`, nothing in an event larger than the UI cap.
 */
import { Effect } from "effect"
import { boundedMetadata, type ToolEvents, windows } from "../events/events.ts"
import type { HookOutcome, Hooks } from "../hooks/hooks.ts"
import { tailCap } from "../output/truncate.ts"
import { headOf } from "../text/cut.ts"
import type { ToolResult } from "../tool/result.ts"
import type { Operation } from "../tool/tool.ts"

export interface EventSink {
  readonly events: ToolEvents["Service"]
  /** Characters per tool_output window. */
  readonly windowSize: number
  readonly uiMaxChars: number
}

export interface EventBase {
  readonly sessionId: string
  readonly callId: string
  readonly tool: string
  /** The program's call id, on a call a program made. */
  readonly parentCallId?: string
}

/**
 * The arguments as tool_start carries them: whole when small, else a preview, so no event
 * exceeds a window (a write's content can be megabytes).
 */
export const argsForEvent = (args: unknown, max: number): unknown => {
  let json: string
  try {
    json = typeof args === "string" ? args : (JSON.stringify(args) ?? "")
  } catch {
    return { truncated: true, unprintable: true }
  }
  return json.length <= max ? args : { truncated: true, chars: json.length, preview: headOf(json, max / 2) }
}

/** tool_start: the call is about to run (or, for one that never ran, is being answered). */
export const announce = (
  sink: EventSink,
  base: EventBase,
  args: unknown,
  paths: ReadonlyArray<string>,
  operations: ReadonlyArray<Operation>
): Effect.Effect<void> =>
  sink.events.publish({
    type: "tool_start",
    ...base,
    args: argsForEvent(args, sink.windowSize),
    paths,
    operations
  })

/** A window of live output, to the caller's listener and to ToolEvents. */
export const showLive = (
  sink: EventSink,
  base: EventBase,
  onOutput: ((chunk: string, offset: number) => void) | undefined,
  chunk: string,
  at: number
): Effect.Effect<void> =>
  Effect.forEach(
    windows(chunk, sink.windowSize),
    (w) => {
      onOutput?.(w.chunk, at + w.offset)
      if (!sink.events.listening()) return Effect.void
      return sink.events.publish({ type: "tool_output", ...base, phase: "live", offset: at + w.offset, chunk: w.chunk })
    },
    { discard: true }
  )

export interface HookInputs {
  readonly hooks: Hooks["Service"] | undefined
  readonly root: string
  readonly input: unknown
  /** Context PreToolUse hooks added, and their outcomes so far. */
  readonly notes: ReadonlyArray<string>
  readonly outcomes: ReadonlyArray<HookOutcome>
}

/** What the hooks said about a call: text for the model (shaped in with the output), and their outcomes. */
export interface HookWords {
  readonly texts: ReadonlyArray<string>
  readonly outcomes: ReadonlyArray<HookOutcome>
}

/**
 * PostToolUse hooks on a call that ran, shown the result as the model would see it without
 * them; their feedback follows the PreToolUse context. The shape stage joins the text in.
 */
export const afterHooks = (
  h: HookInputs,
  sessionId: string,
  result: ToolResult,
  parentCallId?: string
): Effect.Effect<HookWords> => {
  if (h.hooks === undefined || !h.hooks.has("PostToolUse", result.tool))
    return Effect.succeed({ texts: h.notes, outcomes: h.outcomes })
  return Effect.map(
    h.hooks.post({
      session_id: sessionId,
      cwd: h.root,
      tool_name: result.tool,
      tool_input: h.input,
      tool_use_id: result.id,
      ...(parentCallId === undefined ? {} : { parent_tool_use_id: parentCallId }),
      tool_response: { status: result.status, output: result.modelOutput, metadata: result.metadata }
    }),
    (post) => ({ texts: [...h.notes, ...post.feedback], outcomes: [...h.outcomes, ...post.outcomes] })
  )
}

/** The final events: the UI's copy in windows, then the result. Nobody listening: nothing is built. */
export const publishResult = (sink: EventSink, base: EventBase, result: ToolResult): Effect.Effect<void> => {
  if (!sink.events.listening()) return Effect.void
  const finalWindows = Effect.forEach(
    windows(result.uiOutput, sink.windowSize),
    (w) => sink.events.publish({ type: "tool_output", ...base, phase: "final", offset: w.offset, chunk: w.chunk }),
    { discard: true }
  )
  // The UI already has its copy from the windows; nothing in an event may exceed the UI cap.
  const { uiOutput: _ui, ...withoutUi } = result
  const forEvent = {
    ...withoutUi,
    modelOutput: tailCap(result.modelOutput, sink.uiMaxChars),
    metadata: boundedMetadata(result.metadata, sink.windowSize),
    ...(result.error === undefined
      ? {}
      : { error: { tag: result.error.tag, message: tailCap(result.error.message, sink.uiMaxChars) } })
  }
  return Effect.andThen(
    finalWindows,
    Effect.suspend(() => sink.events.publish({ type: "tool_complete", ...base, result: forEvent }))
  )
}
