/**
 * The one door every tool call goes through — built-in, MCP, tool_search, tool_call — and the
 * stages it strings together, each a file returning the value the next one takes:
 *
 *   prepare (prepare.ts)      resolve, parse, coerce, decode, ask what it touches — once → Invocation
 *   authorize (authorize.ts)  rules, hooks, the person, the tool's own checks → Verdict
 *   tool_start                sent here, once, for every call (publish.ts `announce`)
 *   attempt (attempt.ts)      timeout, cancel, retry → Attempted
 *   record (record.ts)        OutputStore.put of the FULL output → Recorded
 *   shape (shape.ts)          compression, the model's budget, hook text, the UI cap → Shaped
 *   build (result.ts)         the ToolResult
 *   publish (publish.ts)      events
 *
 * What differs between callers is a Route (route.ts): where names resolve (a Catalog) and the
 * gates a call passes (the engine under its profiles, the hooks, the Approval). A door is built
 * for one route, once, taking it from context (`CallPath.door`): the Dispatcher's on
 * `Route.gated` (the permission engine, the hooks and the system's Approval), the
 * Orchestrator's on `Route.ungated` (the allow-all engine, no hooks, nobody to ask), so
 * authorize runs the same steps on every route and only the tool's own checks can refuse there.
 * A call pays nothing to find its gates: they are the door's.
 * Nothing lossy happens before the put. Every failure becomes a ToolResult; none escapes.
 */
import { Context, Effect, FileSystem, Layer, Result, Semaphore, Tracer } from "effect"
import { EVENT_WINDOW_CHARS, ToolEvents } from "../events/events.ts"
import { compressEnabledConfig } from "../output/compress/index.ts"
import { OutputConfig } from "../output/config.ts"
import { OutputStore } from "../output/store.ts"
import { InputRound } from "../prompt/input-round.ts"
import { ToolRegistry } from "../registry/registry.ts"
import type { ToolCall, ToolResult } from "../tool/result.ts"
import type { Operation, Searchability, Tool, ToolContext } from "../tool/tool.ts"
import { Workspace } from "../tool/workspace.ts"
import { attempt } from "./attempt.ts"
import { authorize, type GateState, type Gates, gateMetadata, reported, type Verdict } from "./authorize.ts"
import { runInBatches } from "./batching.ts"
import { conclude, type Finishing, type Opened } from "./conclude.ts"
import type { CallContext } from "./context.ts"
import { liveOutput } from "./live.ts"
import { type Catalog, prepare } from "./prepare.ts"
import { announce, type EventBase, type EventSink, showLive } from "./publish.ts"
import { Route, type RouteShape, registryCatalog } from "./route.ts"

/** One door: a route's calls, run through every stage. */
export interface Door {
  /** Runs one call. */
  readonly run: (call: ToolCall, context: CallContext) => Effect.Effect<ToolResult>
  /** Runs one call with its name resolved in `catalog` (a surface's), on the same gates. */
  readonly runIn: (catalog: Catalog, call: ToolCall, context: CallContext) => Effect.Effect<ToolResult>
  /** Runs one turn's calls in planned batches; results come back in call order. */
  readonly runBatch: (calls: ReadonlyArray<ToolCall>, context: CallContext) => Effect.Effect<ReadonlyArray<ToolResult>>
}

export interface CallPathShape {
  /**
   * The door for the Route in context, read once here (one person asked at a time across all
   * the doors of this system).
   */
  readonly door: Effect.Effect<Door, never, Route>
}

const NONE: Readonly<Record<string, unknown>> = {}

/** The path's part of a result's metadata; most calls have nothing to add, and no object is built for them. */
const pathMetadata = (state: GateState): Readonly<Record<string, unknown>> => {
  const inv = state.invocation
  if (inv.coerced.length === 0 && reported(state) === undefined && state.outcomes.length === 0 && inv.via === undefined)
    return NONE
  return {
    ...(inv.coerced.length > 0 ? { coercedArgs: inv.coerced } : {}),
    ...gateMetadata(state),
    ...(inv.via === undefined ? {} : { via: inv.via })
  }
}

/**
 * A span per call, `tool.call`, with the name and call id as sent, and the tool and status it
 * came to: what an embedder's tracer (OpenTelemetry through @effect/opentelemetry, or any
 * `Tracer.Tracer` it provides) exports. With Effect's own tracer, which nobody collects from,
 * no span is made, so a call costs one reference read for it.
 */
const traced = (call: ToolCall, run: Effect.Effect<ToolResult>): Effect.Effect<ToolResult> =>
  Effect.withFiber((fiber) =>
    fiber.getRef(Tracer.Tracer) === Tracer.nativeTracer
      ? run
      : run.pipe(
          Effect.tap((result) => Effect.annotateCurrentSpan({ "tool.id": result.tool, "tool.status": result.status })),
          Effect.withSpan("tool.call", { attributes: { "tool.name": call.name, "tool.call_id": call.id } })
        )
  )

/**
 * Tells a held 2026-era call (its InputRound) that a tool starts running: a question after this
 * cannot be answered by running the call again elsewhere (src/mcp/held-calls.ts).
 */
const toolStarts: Effect.Effect<void> = Effect.flatMap(Effect.service(InputRound), (round) =>
  round?.started === undefined ? Effect.void : round.started
)

const NO_OPERATIONS: ReadonlyArray<Operation> = []
const NO_PATHS: ReadonlyArray<string> = []

export class CallPath extends Context.Service<CallPath, CallPathShape>()("freecode/CallPath") {
  static readonly layer = Layer.effect(
    CallPath,
    Effect.gen(function* () {
      const registry = yield* ToolRegistry
      const store = yield* OutputStore
      const events = yield* ToolEvents
      const settings = yield* OutputConfig
      const { root } = yield* Workspace
      const person = yield* Semaphore.make(1)
      const sink: EventSink = {
        events,
        windowSize: Math.min(EVENT_WINDOW_CHARS, settings.uiMaxChars),
        uiMaxChars: settings.uiMaxChars
      }
      const finishing = (now: () => number): Finishing => ({
        root,
        store,
        events,
        sink,
        shaping: {
          maxChars: settings.maxChars,
          maxLines: settings.maxLines,
          uiMaxChars: settings.uiMaxChars,
          compress,
          store,
          fs
        },
        now
      })
      const compress = yield* compressEnabledConfig
      const fs = yield* FileSystem.FileSystem

      const registered = registryCatalog(registry)

      const open = (call: ToolCall, context: CallContext, started: number, id: string, tool: Tool | undefined) => {
        const base: EventBase =
          context.parentCallId === undefined
            ? { sessionId: context.sessionId, callId: call.id, tool: id }
            : { sessionId: context.sessionId, callId: call.id, tool: id, parentCallId: context.parentCallId }
        const key = { sessionId: context.sessionId, id: call.id, tool: id }
        const show = (chunk: string, at: number) => showLive(sink, base, context.onOutput, chunk, at)
        const live = liveOutput({ open: () => store.open(key), openCapture: () => store.capture(key, show), show })
        const opened: Opened = { context, callId: call.id, started, base, live, tool }
        return opened
      }

      const toolContext =
        (opened: Opened) =>
        (searchable: Searchability | undefined): ToolContext => ({
          sessionId: opened.context.sessionId,
          callId: opened.callId,
          root,
          canSeeImages: opened.context.canSeeImages ?? false,
          caller: opened.context,
          emit: (chunk) => (chunk.length === 0 ? Effect.void : opened.live.add(chunk)),
          capture: Effect.suspend(() => opened.live.capture()),
          ...(searchable === undefined ? {} : { searchable })
        })

      /** tool_start, the one place it is sent: before the attempt, or before the answer of a call that never ran. */
      const started = (
        opened: Opened,
        input: unknown,
        paths: ReadonlyArray<string>,
        operations: ReadonlyArray<Operation>,
        next: Effect.Effect<ToolResult>
      ): Effect.Effect<ToolResult> =>
        // (Guarded here, not run as a no-op: most calls have no listener.)
        events.listening() ? Effect.andThen(announce(sink, opened.base, input, paths, operations), next) : next

      const unTraced = (
        call: ToolCall,
        context: CallContext,
        catalog: Catalog,
        gates: Gates
      ): Effect.Effect<ToolResult> =>
        Effect.clockWith((clock) => {
          const env = finishing(() => clock.currentTimeMillisUnsafe())
          const at = clock.currentTimeMillisUnsafe()
          const prepared = prepare(catalog, call, {
            sessionId: context.sessionId,
            root,
            ...(context.canSeeImages === undefined ? {} : { canSeeImages: context.canSeeImages })
          })
          if (Result.isFailure(prepared)) {
            const np = prepared.failure
            const opened = open(call, context, at, np.tool, undefined)
            const ending = {
              outcome: Result.fail(np.error),
              attempts: 0,
              outputKind: undefined,
              metadata: np.metadata,
              after: undefined
            }
            return started(opened, call.args, NO_PATHS, NO_OPERATIONS, conclude(env, opened, ending))
          }
          const inv = prepared.success
          const opened = open(call, context, at, inv.tool.id, inv.tool)
          return Effect.flatMap(authorize(gates, inv, context, toolContext(opened)), (verdict: Verdict) => {
            const { state } = verdict
            const final = state.invocation
            const metadata = pathMetadata(state)
            if (verdict._tag === "Refused") {
              const ending = {
                outcome: Result.fail(verdict.error),
                attempts: 0,
                outputKind: undefined,
                metadata,
                after: undefined
              }
              return started(opened, final.input, final.paths, final.tool.operations, conclude(env, opened, ending))
            }
            const ran = Effect.andThen(
              toolStarts,
              attempt(context, opened.live, final.tool, final.args, verdict.ctx)
            ).pipe(
              // If this call is itself interrupted, the writer's file (if any) must not outlive it.
              Effect.onInterrupt(() => opened.live.discard()),
              Effect.flatMap((a) =>
                conclude(env, opened, {
                  outcome: a.outcome,
                  attempts: a.attempts,
                  outputKind: final.outputKind,
                  metadata,
                  after: { hooks: gates.hooks, state }
                })
              )
            )
            return started(opened, final.input, final.paths, final.tool.operations, ran)
          })
        })

      const door = (route: RouteShape): Door => {
        const catalog = route.catalog ?? registered
        const gates: Gates = {
          root,
          engine: route.engine,
          chain: route.chain,
          hooks: route.hooks,
          approval: route.approval,
          person
        }
        const run = (call: ToolCall, context: CallContext) => traced(call, unTraced(call, context, catalog, gates))
        return {
          run,
          runIn: (other, call, context) => traced(call, unTraced(call, context, other, gates)),
          runBatch: (calls, context) =>
            runInBatches(
              calls,
              (call) => {
                const found = catalog.find(call.name, context.sessionId)
                return found !== undefined && !("_tag" in found) && found.concurrencySafe
              },
              (call) => run(call, context)
            )
        }
      }

      return CallPath.of({ door: Effect.map(Effect.service(Route), door) })
    })
  )
}
