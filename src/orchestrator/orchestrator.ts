/**
 * The single path every tool call takes, built-in or MCP:
 *   lookup → coerceArgs → decode → validateInput → permission → execute (retry rule, timeout,
 *   cancellation) → OutputStore.put(FULL output) → shape (model budget, UI cap) → events.
 * Nothing lossy happens before the put. Every failure becomes a ToolResult; none escapes.
 */
import { Context, Duration, Effect, FileSystem, Layer, Result } from "effect"
import { boundedMetadata, EVENT_WINDOW_CHARS, ToolEvents, windows } from "../events/events.ts"
import {
  compressEnabledConfig,
  compressForModel,
  compressSpilled,
  failedCall,
  spilledLines
} from "../output/compress/index.ts"
import { OutputConfig } from "../output/config.ts"
import type { OutputView, OutputWriter } from "../output/spill.ts"
import type { CaptureWriter } from "../output/store.ts"
import { OutputStore, type PutResult } from "../output/store.ts"
import { countLines, tailCap } from "../output/truncate.ts"
import { truncateSpilled } from "../output/truncate-spilled.ts"
import { ToolRegistry } from "../registry/registry.ts"
import { coerceArgs } from "../schema/coerce.ts"
import { isRecord } from "../schema/json-schema.ts"
import {
  type ExecuteError,
  InvalidArguments,
  PermissionDenied,
  type ToolError,
  ToolFailure,
  ToolInterrupted,
  ToolTimeout
} from "../tool/errors.ts"
import type { ToolCall, ToolResult, ToolStatus } from "../tool/result.ts"
import type { Searchability, Tool, ToolContext, ToolOutput } from "../tool/tool.ts"
import { Workspace } from "../tool/workspace.ts"
import { declaredConcurrencySafe, runInBatches } from "./batching.ts"

export { BATCH_CONCURRENCY } from "./batching.ts"

import { headOf } from "../text/cut.ts"
import { readableError } from "../tool/readable-error.ts"
import { omittedMarker, type Shaped, shape } from "./shape.ts"

/** A person (or policy) deciding on a call that asks for approval. */
export interface ApprovalRequest {
  readonly tool: string
  readonly args: unknown
  readonly reason: string
}

/** What the caller knows about the turn a call belongs to. */
export interface CallContext {
  readonly sessionId: string
  /** Whether the model can look at images; false unless said (a text-only model never pays for one). */
  readonly canSeeImages?: boolean
  /** Completes when the person cancels; tools with interruptBehavior "cancel" stop then. */
  readonly cancelled?: Effect.Effect<void>
  /** Answers a call that asks for approval; without it, such a call is refused. */
  readonly approve?: (request: ApprovalRequest) => Effect.Effect<boolean>
  /** What a search may show (the Dispatcher sets it from the permission rules); see ToolContext. */
  readonly searchable?: Searchability
  /**
   * Sees this call's live output, window by window, as the tool emits it (the MCP server sends
   * it to its client). Called synchronously: it must not block. ToolEvents carries the same.
   */
  readonly onOutput?: (chunk: string, offset: number) => void
}

/** A call's tool, resolved, and its arguments decoded, with the paths coerced on the way. */
export interface DecodedCall {
  readonly tool: Tool
  readonly args: unknown
  readonly coerced: ReadonlyArray<string>
}

/** Retry rule: a retrySafe tool gets one more attempt after a transient failure, 200 ms × attempt later. */
export const MAX_ATTEMPTS = 2
export const RETRY_BACKOFF_MS = 200

const STATUS: Record<ToolError["_tag"], ToolStatus> = {
  UnknownTool: "error",
  InvalidArguments: "error",
  ToolFailure: "error",
  TransientFailure: "error",
  PermissionDenied: "denied",
  ToolTimeout: "timeout",
  ToolInterrupted: "interrupted"
}

const parseArgs = (tool: string, raw: unknown): Result.Result<unknown, InvalidArguments> => {
  let args = raw ?? {}
  if (typeof args === "string") {
    try {
      args = args.trim() === "" ? {} : JSON.parse(args)
    } catch (e) {
      return Result.fail(invalid(tool, `arguments are not valid JSON (${(e as Error).message}); send a JSON object`))
    }
  }
  return isRecord(args)
    ? Result.succeed(args)
    : Result.fail(invalid(tool, `arguments must be a JSON object, got ${JSON.stringify(args)}`))
}

/**
 * The arguments as tool_start carries them: whole when small, else a preview, so no event
 * exceeds a window (a write's content can be megabytes).
 */
const argsForEvent = (args: unknown, max: number): unknown => {
  const json = typeof args === "string" ? args : (JSON.stringify(args) ?? "")
  return json.length <= max ? args : { truncated: true, chars: json.length, preview: headOf(json, max / 2) }
}

/** How an output is cut to the budget (shape, truncateSpilled and compression take the same). */
interface ShapeOptions {
  readonly callId: string
  readonly stored: PutResult
  readonly maxChars: number
  readonly maxLines: number
  readonly uiMaxChars: number
  readonly direction: Tool["truncate"]
}

const NOT_STORED_EMPTY: PutResult = { stored: false, reason: "empty" }

const describeDefect = readableError

const invalid = (tool: string, message: string) =>
  new InvalidArguments({
    tool,
    issues: [{ path: "(arguments)", message }],
    message: `Invalid arguments for ${tool}: ${message}`
  })

/**
 * What a tool emits while it runs: the partial output (and, for a tool that returns
 * `streamed: true`, the whole output). It goes into a store writer as it arrives, so an
 * output far larger than memory spills to the store's file instead of growing the process.
 */
class LiveOutput {
  private writer: OutputWriter | undefined
  private captured = false
  private readonly open: () => Effect.Effect<OutputWriter>
  private readonly openCapture: () => Effect.Effect<CaptureWriter, ToolFailure>
  private readonly show: (chunk: string, offset: number) => Effect.Effect<void>
  constructor(
    open: () => Effect.Effect<OutputWriter>,
    openCapture: () => Effect.Effect<CaptureWriter, ToolFailure>,
    show: (chunk: string, offset: number) => Effect.Effect<void>
  ) {
    this.open = open
    this.openCapture = openCapture
    this.show = show
  }
  get size(): number {
    return this.writer?.chars() ?? 0
  }
  /** True once the tool emitted something (or opened a capture): there is a writer to settle or discard. */
  get active(): boolean {
    return this.writer !== undefined
  }
  /** The output so far, while it is held in memory; "" once it spilled. */
  get text(): string {
    return this.writer?.text() ?? ""
  }
  /** True when the output outgrew memory: read it through commit, never as one string. */
  get spilled(): boolean {
    return this.writer !== undefined && !this.writer.inMemory()
  }
  /** A file the tool's child writes into; the capture shows what arrives itself. */
  capture(): Effect.Effect<CaptureWriter, ToolFailure> {
    return Effect.suspend(() => {
      if (this.writer !== undefined)
        return Effect.die(new Error("ctx.capture must be opened before anything is emitted"))
      this.captured = true
      return Effect.map(this.openCapture(), (w) => {
        this.writer = w
        return w
      })
    })
  }
  add(chunk: string): Effect.Effect<void> {
    return Effect.suspend(() =>
      this.writer === undefined
        ? Effect.map(this.open(), (w) => {
            this.writer = w
          })
        : Effect.void
    ).pipe(
      Effect.andThen(
        Effect.suspend(() => {
          if (this.captured) return this.writer!.write(chunk)
          const offset = this.writer!.chars()
          return this.writer!.write(chunk).pipe(Effect.andThen(this.show(chunk, offset)))
        })
      )
    )
  }
  /**
   * Brings the output up to date (a capture reads its file to the end) before it is read. Like
   * discard, it is the writer's as it is when asked for: nothing to do for a tool that emitted
   * nothing, most tools.
   */
  get settle(): Effect.Effect<void> {
    return this.writer?.settle ?? Effect.void
  }
  commit(): Effect.Effect<{ readonly result: PutResult; readonly view: OutputView }> {
    return this.writer!.commit
  }
  get discard(): Effect.Effect<void> {
    return this.writer?.discard ?? Effect.void
  }
}

export class Orchestrator extends Context.Service<
  Orchestrator,
  {
    /**
     * Runs one call. `decoded`: the caller (the Dispatcher) already resolved the tool and decoded
     * these arguments (`call.args`), so they are not decoded twice.
     */
    readonly execute: (call: ToolCall, context: CallContext, decoded?: DecodedCall) => Effect.Effect<ToolResult>
    /** Runs one turn's calls in planned batches; results come back in call order. */
    readonly executeBatch: (
      calls: ReadonlyArray<ToolCall>,
      context: CallContext
    ) => Effect.Effect<ReadonlyArray<ToolResult>>
  }
>()("freecode/Orchestrator") {
  static readonly layer = Layer.effect(
    Orchestrator,
    Effect.gen(function* () {
      const registry = yield* ToolRegistry
      const store = yield* OutputStore
      const events = yield* ToolEvents
      const settings = yield* OutputConfig
      const { root } = yield* Workspace
      const windowSize = Math.min(EVENT_WINDOW_CHARS, settings.uiMaxChars)
      const compress = yield* compressEnabledConfig
      const fs = yield* FileSystem.FileSystem

      // (Effects chained, not a generator: every call passes through here.)
      const execute = (call: ToolCall, context: CallContext, decoded?: DecodedCall): Effect.Effect<ToolResult> =>
        // One look-up of the fiber's clock, read at the start and the end.
        Effect.clockWith((clock) => {
          const started = clock.currentTimeMillisUnsafe()
          const sessionId = context.sessionId
          const showLive = (chunk: string, at: number) =>
            Effect.forEach(
              windows(chunk, windowSize),
              (w) => {
                context.onOutput?.(w.chunk, at + w.offset)
                if (!events.listening()) return Effect.void
                return events.publish({
                  type: "tool_output",
                  ...base,
                  tool: toolId,
                  phase: "live",
                  offset: at + w.offset,
                  chunk: w.chunk
                })
              },
              { discard: true }
            )
          const live = new LiveOutput(
            () => store.open({ sessionId, id: call.id, tool: toolId }),
            () => store.capture({ sessionId, id: call.id, tool: toolId }, showLive),
            showLive
          )
          const base = { sessionId, callId: call.id }
          let toolId = call.name
          let tool: Tool | undefined
          let attempts = 0
          let coerced: ReadonlyArray<string> = []
          /** The kind of output the tool declares for these arguments (compression shapes by it). */
          let outputKind: string | undefined
          let announced = false

          /** Whether tool_start is still to be published: once, and only when someone listens. */
          const announcing = () => !announced && events.listening()
          const announce = (paths: ReadonlyArray<string>): Effect.Effect<void> => {
            announced = true
            return events.publish({
              type: "tool_start",
              ...base,
              tool: toolId,
              args: argsForEvent(call.args, windowSize),
              paths,
              operations: tool?.operations ?? []
            })
          }

          const ctx: ToolContext = {
            sessionId,
            callId: call.id,
            root,
            canSeeImages: context.canSeeImages ?? false,
            emit: (chunk) => (chunk.length === 0 ? Effect.void : live.add(chunk)),
            capture: Effect.suspend(() => live.capture()),
            ...(context.searchable === undefined ? {} : { searchable: context.searchable })
          }

          const permit = (t: Tool, args: unknown): Effect.Effect<void, PermissionDenied> =>
            Effect.gen(function* () {
              const check = t.checkPermissions === undefined ? undefined : yield* t.checkPermissions(args, ctx)
              if (check?.behavior === "deny") {
                return yield* new PermissionDenied({
                  tool: t.id,
                  message: check.reason ?? `${t.id} refused this call.`
                })
              }
              const ask = check?.behavior === "ask" || t.requiresApproval
              if (!ask) return
              const reason = check?.reason ?? `${t.id} requires approval for every call.`
              const approved =
                context.approve === undefined ? false : yield* context.approve({ tool: t.id, args, reason })
              if (!approved) {
                return yield* new PermissionDenied({
                  tool: t.id,
                  message:
                    context.approve === undefined
                      ? `${reason} No one is available to approve it here; do the task another way, or ask the person to allow it.`
                      : `The person declined this ${t.id} call. Do not retry it unchanged; ask what they want instead.`
                })
              }
            })

          /** Completes when the person cancels a cancellable tool, failing with its partial output. */
          const cancelledBy = (t: Tool): Effect.Effect<never, ToolInterrupted> | undefined =>
            context.cancelled === undefined || t.interruptBehavior === "block"
              ? undefined
              : context.cancelled.pipe(
                  Effect.andThen(
                    Effect.suspend(() =>
                      Effect.fail(
                        new ToolInterrupted({
                          tool: t.id,
                          partialOutput: live.text,
                          message: `${t.id} was cancelled by the person${live.size > 0 ? "; the output so far follows" : ""}.`
                        })
                      )
                    )
                  )
                )

          /** `effect`, unless the person cancels first. */
          const cancellable = <A, E>(t: Tool, effect: Effect.Effect<A, E>): Effect.Effect<A, E | ToolInterrupted> => {
            const cancelled = cancelledBy(t)
            return cancelled === undefined ? effect : Effect.raceFirst(effect, cancelled)
          }

          /**
           * One attempt, raced against its timeout and the person's cancel in one race: a tool that
           * finishes at once forks one fiber, and neither the timer nor the cancel watch starts.
           */
          const attempt = (
            t: Tool,
            args: unknown,
            n: number
          ): Effect.Effect<ToolOutput, ExecuteError | ToolTimeout | ToolInterrupted> =>
            Effect.suspend(() => {
              attempts = n
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
                          partialOutput: live.text,
                          message: `${t.id} timed out after ${Duration.format(timeout)}${live.size > 0 ? "; the output so far follows" : ""}.`
                        })
                      )
                    )
                  )
                )
                const cancelled = cancelledBy(t)
                return cancelled === undefined ? timedOut : Effect.raceFirst(timedOut, cancelled)
              })
              // (A defect of the tool's ends the race; the pipeline turns it into a ToolFailure.)
              return Effect.raceFirst(t.execute(args, ctx), stopper)
            }).pipe(
              Effect.catchTag("TransientFailure", (e) =>
                t.retrySafe && n < MAX_ATTEMPTS
                  ? cancellable(t, Effect.sleep(Duration.millis(RETRY_BACKOFF_MS * n))).pipe(
                      Effect.andThen(attempt(t, args, n + 1))
                    )
                  : Effect.fail(e)
              )
            )

          /** The checks and the run, for a resolved tool and decoded arguments. */
          const run = (t: Tool, args: unknown): Effect.Effect<ToolOutput, ToolError> => {
            outputKind = t.outputKind?.(args)
            // Asked even when no one listens: a declaration that throws must stop the call.
            const paths = t.paths(args, ctx)
            let steps: Effect.Effect<ToolOutput, ToolError> = attempt(t, args, 1)
            if (t.checkPermissions !== undefined || t.requiresApproval) steps = Effect.andThen(permit(t, args), steps)
            const validate = t.validateInput
            if (validate !== undefined)
              steps = Effect.andThen(
                Effect.suspend(() => validate(args, ctx)),
                steps
              )
            return announcing() ? Effect.andThen(announce(paths), steps) : steps
          }

          // (Effects chained, not a generator: every call passes through here.)
          const pipeline: Effect.Effect<ToolOutput, ToolError> = Effect.suspend(() => {
            if (decoded !== undefined) {
              tool = decoded.tool
              toolId = decoded.tool.id
              coerced = decoded.coerced
              return run(decoded.tool, decoded.args)
            }
            return Effect.flatMap(registry.resolve(call.name), (t) => {
              tool = t
              toolId = t.id
              const raw = parseArgs(t.id, call.args)
              if (Result.isFailure(raw)) return Effect.fail(raw.failure)
              const repaired = coerceArgs(t.inputSchema, raw.success)
              coerced = repaired.paths
              const checked = t.decode(repaired.value)
              return Result.isFailure(checked) ? Effect.fail(checked.failure) : run(t, checked.success)
            })
          }).pipe(
            // A tool that throws (in execute, paths, validateInput or checkPermissions): never a defect.
            Effect.catchDefect((defect) =>
              Effect.fail(
                new ToolFailure({
                  message: `${toolId} failed unexpectedly (a bug in the tool, not in your call): ${describeDefect(defect)}`
                })
              )
            )
          )

          type Outcome = Result.Result<ToolOutput, ToolError>

          /** The result and its events, once the output is stored and (maybe) compressed. */
          const complete = (
            outcome: Outcome,
            stored: PutResult,
            view: OutputView,
            outputLines: number,
            compressed: ReturnType<typeof compressForModel>,
            shapeOptions: ShapeOptions
          ): Effect.Effect<ToolResult> => {
            const error = Result.isFailure(outcome) ? outcome.failure : undefined
            const shaped: Shaped =
              compressed !== undefined
                ? {
                    ...compressed,
                    uiOutput: tailCap(view.kind === "text" ? view.text : view.tail, settings.uiMaxChars)
                  }
                : view.kind === "text"
                  ? shape({ text: view.text, ...shapeOptions, lines: outputLines })
                  : shapeSpilledView(view, shapeOptions)
            const outputChars = view.kind === "text" ? view.text.length : view.chars
            const modelOutput =
              error === undefined
                ? shaped.modelOutput
                : outputChars === 0
                  ? error.message
                  : `${error.message}\n${shaped.modelOutput}`
            const toolMetadata = Result.isSuccess(outcome)
              ? (outcome.success.metadata ?? {})
              : error?._tag === "ToolFailure"
                ? (error.metadata ?? {})
                : {}
            // The declared kind is on every result, failed or not, like the tool's own metadata.
            const withKind = outputKind === undefined ? toolMetadata : { ...toolMetadata, outputKind }
            const metadata = coerced.length > 0 ? { ...withKind, coercedArgs: coerced } : withKind
            const finished = clock.currentTimeMillisUnsafe()

            const result: ToolResult = {
              id: call.id,
              tool: toolId,
              status: error === undefined ? "ok" : STATUS[error._tag],
              title: Result.isSuccess(outcome) ? outcome.success.title : `${toolId}: ${error?._tag ?? "error"}`,
              modelOutput,
              uiOutput:
                error === undefined
                  ? shaped.uiOutput
                  : outputChars === 0
                    ? error.message
                    : `${error.message}\n${shaped.uiOutput}`,
              ...(stored.stored ? { outputId: call.id } : {}),
              outputChars,
              outputLines,
              truncated: shaped.truncated,
              metadata,
              ...(error === undefined ? {} : { error: { tag: error._tag, message: error.message } }),
              attempts,
              durationMs: finished - started
            }

            // Nobody subscribed: the UI's copy and the event need not be built.
            if (!events.listening()) return Effect.succeed(result)
            const finalWindows = Effect.forEach(
              windows(result.uiOutput, windowSize),
              (w) =>
                events.publish({
                  type: "tool_output",
                  ...base,
                  tool: toolId,
                  phase: "final",
                  offset: w.offset,
                  chunk: w.chunk
                }),
              { discard: true }
            )
            // The UI already has its copy from the windows; nothing in an event may exceed the UI cap.
            const { uiOutput: _ui, ...withoutUi } = result
            const forEvent = {
              ...withoutUi,
              modelOutput: tailCap(result.modelOutput, settings.uiMaxChars),
              metadata: boundedMetadata(result.metadata, windowSize),
              ...(result.error === undefined
                ? {}
                : { error: { tag: result.error.tag, message: tailCap(result.error.message, settings.uiMaxChars) } })
            }
            const completed = Effect.suspend(() =>
              events.publish({ type: "tool_complete", ...base, tool: toolId, result: forEvent })
            )
            return Effect.as(Effect.andThen(finalWindows, completed), result)
          }

          /** Content-aware compression, by the declared kind; a timeout's partial output too. */
          const compressAndComplete = (
            outcome: Outcome,
            stored: PutResult,
            view: OutputView,
            outputLines: number
          ): Effect.Effect<ToolResult> => {
            const budget = Math.min(tool?.maxResultSizeChars ?? settings.maxChars, settings.maxChars)
            const shapeOptions: ShapeOptions = {
              callId: call.id,
              stored,
              maxChars: budget,
              maxLines: settings.maxLines,
              uiMaxChars: settings.uiMaxChars,
              direction: tool?.truncate ?? "both"
            }
            if (!compress || outputKind === undefined) {
              return complete(outcome, stored, view, outputLines, undefined, shapeOptions)
            }
            // A failed call keeps its failure lines whatever its kind.
            const compressOptions = {
              ...shapeOptions,
              failed: failedCall(
                Result.isFailure(outcome),
                Result.isSuccess(outcome) ? outcome.success.metadata : undefined
              )
            }
            if (view.kind === "text") {
              const compressed = compressForModel(outputKind, view.text, compressOptions)
              return complete(outcome, stored, view, outputLines, compressed, shapeOptions)
            }
            // A spilled output is read line by line from the store's file, never whole.
            const kind = outputKind
            return Effect.flatMap(spilledLines(store, fs, sessionId, call.id), (lines) =>
              Effect.flatMap(compressSpilled(kind, view, lines, compressOptions), (compressed) =>
                complete(outcome, stored, view, outputLines, compressed, shapeOptions)
              )
            )
          }

          /** The whole output goes into the store BEFORE any lossy cap. */
          const record = (outcome: Outcome): Effect.Effect<ToolResult> => {
            const error = Result.isFailure(outcome) ? outcome.failure : undefined
            const partial = error !== undefined && "partialOutput" in error ? error.partialOutput : ""
            // A streamed output (and any partial one) is what the tool emitted; it may have spilled.
            const fromLive = Result.isSuccess(outcome)
              ? outcome.success.streamed === true
              : error !== undefined && "partialOutput" in error && (partial !== "" || live.size > 0)
            if (fromLive && live.spilled) {
              return Effect.flatMap(live.commit(), ({ result, view }) =>
                compressAndComplete(outcome, result, view, view.kind === "text" ? countLines(view.text) : view.lines)
              )
            }
            const full = fromLive ? live.text : Result.isSuccess(outcome) ? outcome.success.output : partial
            const outputLines = countLines(full)
            const put: Effect.Effect<PutResult> =
              full.length === 0
                ? Effect.succeed(NOT_STORED_EMPTY)
                : store.put({ sessionId, id: call.id, tool: toolId, text: full, lines: outputLines })
            return Effect.flatMap(live.active ? Effect.andThen(live.discard, put) : put, (stored) =>
              compressAndComplete(outcome, stored, { kind: "text", text: full }, outputLines)
            )
          }

          // If this call is itself interrupted, the writer's file (if any) must not outlive it.
          return Effect.flatMap(Effect.result(pipeline).pipe(Effect.onInterrupt(() => live.discard)), (outcome) => {
            // (Guarded here, not run as no-ops: most calls have no listener and emit nothing.)
            const first = announcing() ? announce([]) : undefined
            const settle = live.active ? live.settle : undefined
            if (first === undefined && settle === undefined) return record(outcome)
            const before = first === undefined ? settle! : settle === undefined ? first : Effect.andThen(first, settle)
            return Effect.andThen(
              before,
              Effect.suspend(() => record(outcome))
            )
          })
        })

      /** The model's and the UI's copies of an output too large to hold, from its two ends. */
      const shapeSpilledView = (view: Extract<OutputView, { kind: "spilled" }>, options: ShapeOptions): Shaped => {
        const cut = truncateSpilled(view, { ...options, marker: omittedMarker(options.callId, options.stored) })
        return { modelOutput: cut.text, uiOutput: tailCap(view.tail, options.uiMaxChars), truncated: cut.truncated }
      }

      const executeBatch = (calls: ReadonlyArray<ToolCall>, context: CallContext) =>
        Effect.flatMap(registry.tools, (tools) =>
          runInBatches(calls, declaredConcurrencySafe(tools), (call) => execute(call, context))
        )

      return Orchestrator.of({ execute, executeBatch })
    })
  )
}
