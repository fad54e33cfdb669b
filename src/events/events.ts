/**
 * tool_start / tool_output / tool_complete as a Stream, for UIs. Output travels in windows,
 * so no event ever carries more than a window (and never more than the UI cap): a UI gets a
 * large result as a stream of small messages, not one huge one (spec gap 8).
 */
import { Context, Effect, Layer, PubSub, type Scope, Stream } from "effect"
import type { JobState } from "../session/job-records.ts"
import { cutEnd, cutStart } from "../text/cut.ts"
import type { ToolResult } from "../tool/result.ts"
import type { Operation } from "../tool/tool.ts"

/** The largest piece of output one event carries. */
export const EVENT_WINDOW_CHARS = 16 * 1024

export interface ToolStartEvent {
  readonly type: "tool_start"
  readonly sessionId: string
  readonly callId: string
  readonly tool: string
  /** Set on a call a program made: the program's call id. */
  readonly parentCallId?: string
  readonly args: unknown
  readonly paths: ReadonlyArray<string>
  readonly operations: ReadonlyArray<Operation>
}

export interface ToolOutputEvent {
  readonly type: "tool_output"
  readonly sessionId: string
  readonly callId: string
  readonly tool: string
  /** Set on a call a program made: the program's call id. */
  readonly parentCallId?: string
  /** "live" while the tool runs; "final" is the UI copy of the result, sent before tool_complete. */
  readonly phase: "live" | "final"
  /** Character offset of this window within its phase's output. */
  readonly offset: number
  readonly chunk: string
  /**
   * Set on the live output of a background job (bash `run_in_background`), which keeps coming
   * after the call that started it (`callId`) has completed; `offset` is then within the job's output.
   */
  readonly jobId?: string
  /** On a job's last event only (an empty chunk after its last output): how it ended. */
  readonly jobState?: JobState
}

export interface ToolCompleteEvent {
  readonly type: "tool_complete"
  readonly sessionId: string
  readonly callId: string
  readonly tool: string
  /** Set on a call a program made: the program's call id. */
  readonly parentCallId?: string
  /**
   * The result without its UI copy, which arrived as "final" tool_output windows; its
   * modelOutput is tail-capped to the UI cap and its metadata bounded (boundedMetadata).
   */
  readonly result: Omit<ToolResult, "uiOutput">
}

export type ToolEvent = ToolStartEvent | ToolOutputEvent | ToolCompleteEvent

/** Splits text into windows of at most `size` characters, never inside a surrogate pair. */
export const windows = (text: string, size: number): Array<{ offset: number; chunk: string }> => {
  if (text.length <= size) return text.length === 0 ? [] : [{ offset: 0, chunk: text }]
  const out: Array<{ offset: number; chunk: string }> = []
  let offset = 0
  while (offset < text.length) {
    let end = cutEnd(text, offset + size)
    if (end <= offset) end = cutStart(text, offset + 1) // a window smaller than one code point
    out.push({ offset, chunk: text.slice(offset, end) })
    offset = end
  }
  return out
}

const jsonChars = (value: unknown): number => {
  try {
    return JSON.stringify(value)?.length ?? 0
  } catch {
    return Number.POSITIVE_INFINITY
  }
}

/**
 * A result's metadata as tool_complete carries it: whole when it fits `max` characters of JSON;
 * otherwise each entry over a quarter of `max` (an image's base64) is replaced by its size. The
 * ToolResult itself keeps everything; only the event is bounded.
 */
export const boundedMetadata = (
  metadata: Readonly<Record<string, unknown>>,
  max: number
): Readonly<Record<string, unknown>> => {
  const entries = Object.entries(metadata)
  if (entries.length === 0) return metadata
  const whole = jsonChars(metadata)
  if (whole <= max) return metadata
  const bounded = Object.fromEntries(
    entries.map(([key, value]) => {
      const chars = jsonChars(value)
      return [key, chars > max / 4 ? { omitted: true, chars } : value]
    })
  )
  return jsonChars(bounded) <= max ? bounded : { omitted: true, chars: whole }
}

export class ToolEvents extends Context.Service<
  ToolEvents,
  {
    readonly publish: (event: ToolEvent) => Effect.Effect<void>
    /** Each run of this stream is a new subscriber and sees events published after it starts. */
    readonly stream: Stream.Stream<ToolEvent>
    /** Subscribes now (in the current scope), so nothing published after this call is missed. */
    readonly subscribe: Effect.Effect<Stream.Stream<ToolEvent>, never, Scope.Scope>
    /**
     * Whether anyone is subscribed now. An event nobody receives need not be built: a call's
     * events (its arguments and metadata as JSON, its output in windows) cost ~30 µs.
     */
    readonly listening: () => boolean
  }
>()("freecode/ToolEvents") {
  static readonly layer = Layer.effect(
    ToolEvents,
    Effect.gen(function* () {
      // Sliding: a stalled UI loses old windows rather than growing this process without bound.
      const pubsub = yield* PubSub.sliding<ToolEvent>(4096)
      yield* Effect.addFinalizer(() => PubSub.shutdown(pubsub))
      let subscribers = 0
      const counted = Effect.acquireRelease(
        Effect.sync(() => {
          subscribers++
        }),
        () =>
          Effect.sync(() => {
            subscribers--
          })
      )
      const subscribe = Effect.andThen(
        counted,
        Effect.map(PubSub.subscribe(pubsub), (sub) => Stream.fromSubscription(sub))
      )
      return ToolEvents.of({
        publish: (event) => PubSub.publish(pubsub, event).pipe(Effect.asVoid),
        // Each run subscribes for as long as it runs.
        stream: Stream.unwrap(subscribe),
        subscribe,
        listening: () => subscribers > 0
      })
    })
  )
}
