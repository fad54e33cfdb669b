/**
 * The single path every tool call takes, built-in, MCP, tool_search or tool_call:
 *
 *   prepare (prepare.ts)      resolve, parse, coerce, decode — once
 *   authorize (authorize.ts)  rules, hooks, the person, the tool's own checks
 *   attempt (attempt.ts)      timeout, cancel, retry
 *   record (record.ts)        OutputStore.put of the FULL output
 *   shape (views.ts)          compression, the model's budget, the UI cap
 *   build (result.ts)         the ToolResult
 *   publish (publish.ts)      PostToolUse hooks, then events
 *
 * Nothing lossy happens before the put. Every failure becomes a ToolResult; none escapes.
 * The Dispatcher runs this path with the permission engine and hooks; `execute` runs it with the
 * tool's own checks only.
 */
import { type Clock, Context, Effect, FileSystem, Layer, Result, Semaphore } from "effect"
import { EVENT_WINDOW_CHARS, ToolEvents } from "../events/events.ts"
import type { Hooks } from "../hooks/hooks.ts"
import { compressEnabledConfig, failedCall } from "../output/compress/index.ts"
import { OutputConfig } from "../output/config.ts"
import { OutputStore } from "../output/store.ts"
import type { Approval } from "../permission/approval.ts"
import type { PermissionEngineShape, Policy } from "../permission/engine.ts"
import { ToolRegistry } from "../registry/registry.ts"
import type { ToolCall, ToolResult } from "../tool/result.ts"
import type { Searchability, Tool, ToolContext } from "../tool/tool.ts"
import { Workspace } from "../tool/workspace.ts"
import { attempt, defectFailure } from "./attempt.ts"
import { authorize, type GateState, type Gates, gateMetadata, type Verdict } from "./authorize.ts"
import { declaredConcurrencySafe, runInBatches } from "./batching.ts"
import type { CallContext } from "./context.ts"
import { LiveOutput } from "./live.ts"
import { type Catalog, type Invocation, type NotPrepared, prepare } from "./prepare.ts"
import { afterHooks, announce, type EventBase, type EventSink, publishResult, showLive } from "./publish.ts"
import { type Outcome, type Recorded, record } from "./record.ts"
import { buildResult } from "./result.ts"
import type { Shaped } from "./shape.ts"
import { type ShapeSettings, shapeOutput } from "./views.ts"

export { MAX_ATTEMPTS, RETRY_BACKOFF_MS } from "./attempt.ts"
export { BATCH_CONCURRENCY } from "./batching.ts"
export type { ApprovalRequest, CallContext } from "./context.ts"
export type { Catalog, Invocation } from "./prepare.ts"

/** What a caller of the path brings besides the call: where names resolve, and which gates apply. */
export interface Route {
  readonly catalog: Catalog
  readonly engine?: PermissionEngineShape
  readonly chain?: ReadonlyArray<Policy>
  readonly hooks?: Hooks["Service"]
  readonly approval?: Approval["Service"]
}

/** The registry as a catalog: exact ids, wrong-case names repaired, no strict-null reading. */
export const registryCatalog = (registry: ToolRegistry["Service"]): Catalog => ({
  find: (name) => registry.lookup(name),
  names: () => registry.toolsNow().map((t) => t.id),
  strictNulls: false
})

/** What a refused call would have touched, for its tool_start; a declaration that throws says nothing. */
const declaredPaths = (inv: Invocation, ctx: ToolContext): ReadonlyArray<string> => {
  try {
    return inv.tool.paths(inv.args, ctx)
  } catch {
    return []
  }
}

/** The per-call record the stages after authorize share. */
interface CallRecord {
  readonly call: ToolCall
  readonly context: CallContext
  readonly clock: Clock.Clock
  readonly started: number
  readonly base: EventBase
  readonly live: LiveOutput
  readonly tool: Tool | undefined
  /** Set by the run stage: attempts made, the declared output kind, whether tool_start went out. */
  attempts: number
  outputKind: string | undefined
  announced: boolean
}

export class Orchestrator extends Context.Service<
  Orchestrator,
  {
    /** Runs one call through the registry, with the tool's own checks (no rules, no hooks). */
    readonly execute: (call: ToolCall, context: CallContext) => Effect.Effect<ToolResult>
    /** Runs one turn's calls in planned batches; results come back in call order. */
    readonly executeBatch: (
      calls: ReadonlyArray<ToolCall>,
      context: CallContext
    ) => Effect.Effect<ReadonlyArray<ToolResult>>
    /** Runs one call on a route: the Dispatcher's (rules, hooks, the person) or a surface's. */
    readonly run: (call: ToolCall, context: CallContext, route: Route) => Effect.Effect<ToolResult>
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
      const person = yield* Semaphore.make(1)
      const sink: EventSink = {
        events,
        windowSize: Math.min(EVENT_WINDOW_CHARS, settings.uiMaxChars),
        uiMaxChars: settings.uiMaxChars
      }
      const shaping: ShapeSettings = {
        maxChars: settings.maxChars,
        maxLines: settings.maxLines,
        uiMaxChars: settings.uiMaxChars,
        compress: yield* compressEnabledConfig,
        store,
        fs: yield* FileSystem.FileSystem
      }
      const registryRoute: Route = { catalog: registryCatalog(registry) }

      const newRecord = (
        call: ToolCall,
        context: CallContext,
        clock: Clock.Clock,
        tool: Tool | undefined,
        id: string
      ) => {
        const base: EventBase =
          context.parentCallId === undefined
            ? { sessionId: context.sessionId, callId: call.id, tool: id }
            : { sessionId: context.sessionId, callId: call.id, tool: id, parentCallId: context.parentCallId }
        const show = (chunk: string, at: number) => showLive(sink, base, context.onOutput, chunk, at)
        const key = { sessionId: context.sessionId, id: call.id, tool: id }
        const live = new LiveOutput(
          () => store.open(key),
          () => store.capture(key, show),
          show
        )
        const rec: CallRecord = {
          call,
          context,
          clock,
          started: clock.currentTimeMillisUnsafe(),
          base,
          live,
          tool,
          attempts: 0,
          outputKind: undefined,
          announced: false
        }
        return rec
      }

      const toolContext =
        (rec: CallRecord) =>
        (searchable: Searchability | undefined): ToolContext => ({
          sessionId: rec.context.sessionId,
          callId: rec.call.id,
          root,
          canSeeImages: rec.context.canSeeImages ?? false,
          caller: rec.context,
          emit: (chunk) => (chunk.length === 0 ? Effect.void : rec.live.add(chunk)),
          capture: Effect.suspend(() => rec.live.capture()),
          ...(searchable === undefined ? {} : { searchable })
        })

      /** The run stage of an allowed call: what it declares, tool_start, then its attempts. */
      const runAllowed = (rec: CallRecord, inv: Invocation, ctx: ToolContext): Effect.Effect<Outcome> => {
        const { tool, args } = inv
        let paths: ReadonlyArray<string>
        try {
          rec.outputKind = tool.outputKind?.(args)
          // Asked even when no one listens: a declaration that throws must stop the call.
          paths = tool.paths(args, ctx)
        } catch (defect) {
          return Effect.succeed(Result.fail(defectFailure(tool.id, defect)))
        }
        const run = Effect.result(attempt(rec, tool, args, ctx))
        if (!events.listening()) return run
        rec.announced = true
        return Effect.andThen(announce(sink, rec.base, inv.input, paths, tool.operations), run)
      }

      /**
       * record → shape → result → publish, for any outcome. Hand-chained: every call passes
       * through here (docs/architecture.md, "Effect.fn, fnUntraced and hand-chaining").
       */
      const finish = (
        rec: CallRecord,
        outcome: Outcome,
        input: unknown,
        metadata: Readonly<Record<string, unknown>>,
        hooks: { readonly route: Route; readonly state: GateState } | undefined,
        paths: () => ReadonlyArray<string> = () => []
      ): Effect.Effect<ToolResult> => {
        const published = (result: ToolResult): Effect.Effect<ToolResult> =>
          events.listening() ? Effect.as(publishResult(sink, rec.base, result), result) : Effect.succeed(result)
        const built = (recorded: Recorded, shaped: Shaped): Effect.Effect<ToolResult> => {
          const result = buildResult({
            callId: rec.call.id,
            tool: rec.base.tool,
            outcome,
            recorded,
            shaped,
            metadata: rec.outputKind === undefined ? metadata : { outputKind: rec.outputKind, ...metadata },
            attempts: rec.attempts,
            durationMs: rec.clock.currentTimeMillisUnsafe() - rec.started
          })
          if (hooks === undefined) return published(result)
          const { state } = hooks
          const inputs = {
            hooks: hooks.route.hooks,
            root,
            input: state.invocation.input,
            notes: state.notes,
            outcomes: state.outcomes
          }
          return Effect.flatMap(afterHooks(inputs, rec.context.sessionId, result, rec.context.parentCallId), published)
        }
        const stored = Effect.flatMap(
          record(
            store,
            { sessionId: rec.context.sessionId, callId: rec.call.id, tool: rec.base.tool, live: rec.live },
            outcome
          ),
          (recorded) =>
            Effect.flatMap(
              shapeOutput(
                shaping,
                {
                  sessionId: rec.context.sessionId,
                  callId: rec.call.id,
                  tool: rec.tool,
                  outputKind: rec.outputKind,
                  failed: failedCall(
                    Result.isFailure(outcome),
                    Result.isSuccess(outcome) ? outcome.success.metadata : undefined
                  )
                },
                recorded
              ),
              (shaped) => built(recorded, shaped)
            )
        )
        // (Guarded here, not run as no-ops: most calls have no listener and emit nothing.)
        const first =
          !rec.announced && events.listening()
            ? announce(sink, rec.base, input, paths(), rec.tool?.operations ?? [])
            : undefined
        const settle = rec.live.active ? rec.live.settle : undefined
        const before = first === undefined ? settle : settle === undefined ? first : Effect.andThen(first, settle)
        return before === undefined ? stored : Effect.andThen(before, stored)
      }

      const unprepared = (call: ToolCall, context: CallContext, clock: Clock.Clock, np: NotPrepared) =>
        finish(
          newRecord(call, context, clock, undefined, np.tool),
          Result.fail(np.error),
          call.args,
          np.metadata,
          undefined
        )

      const NONE: Readonly<Record<string, unknown>> = {}
      const pathMetadata = (state: GateState): Readonly<Record<string, unknown>> => {
        const inv = state.invocation
        // Most calls have nothing to add: no object is built for them.
        if (
          inv.coerced.length === 0 &&
          state.decision === undefined &&
          state.outcomes.length === 0 &&
          inv.via === undefined
        )
          return NONE
        return {
          ...(inv.coerced.length > 0 ? { coercedArgs: inv.coerced } : {}),
          ...gateMetadata(state),
          ...(inv.via === undefined ? {} : { via: inv.via })
        }
      }

      // One set of gates per route (routes are made once per dispatcher), not one per call.
      const gates = new WeakMap<Route, Gates>()
      const gatesOf = (route: Route): Gates => {
        const known = gates.get(route)
        if (known !== undefined) return known
        const made: Gates = {
          root,
          engine: route.engine,
          chain: route.chain ?? [],
          hooks: route.hooks,
          approval: route.approval,
          person
        }
        gates.set(route, made)
        return made
      }

      const run = (call: ToolCall, context: CallContext, route: Route): Effect.Effect<ToolResult> =>
        Effect.clockWith((clock) => {
          const prepared = prepare(route.catalog, call, context.sessionId)
          if (Result.isFailure(prepared)) return unprepared(call, context, clock, prepared.failure)
          const rec = newRecord(call, context, clock, prepared.success.tool, prepared.success.tool.id)
          const decided = authorize(gatesOf(route), prepared.success, context, toolContext(rec))
          return Effect.flatMap(decided, (verdict: Verdict) => {
            const { state } = verdict
            const metadata = pathMetadata(state)
            if (verdict._tag === "Refused") {
              const inv = state.invocation
              return finish(rec, Result.fail(verdict.error), inv.input, metadata, undefined, () =>
                declaredPaths(inv, toolContext(rec)(undefined))
              )
            }
            // If this call is itself interrupted, the writer's file (if any) must not outlive it.
            return runAllowed(rec, state.invocation, verdict.ctx).pipe(
              Effect.onInterrupt(() => rec.live.discard),
              Effect.flatMap((outcome) => finish(rec, outcome, state.invocation.input, metadata, { route, state }))
            )
          })
        })

      const execute = (call: ToolCall, context: CallContext) => run(call, context, registryRoute)

      const executeBatch = (calls: ReadonlyArray<ToolCall>, context: CallContext) =>
        Effect.flatMap(registry.tools, (tools) =>
          runInBatches(calls, declaredConcurrencySafe(tools), (call) => execute(call, context))
        )

      return Orchestrator.of({ execute, executeBatch, run })
    })
  )
}
