/**
 * The Orchestrator: the call path (call-path.ts) over the registry with the tool's own checks
 * alone — the ungated route: the allow-all engine, no hooks, nobody to ask (what a test or an
 * embedder without a policy runs).
 * A thin facade over `CallPath`; the Dispatcher is the other, with every gate.
 */
import { Context, Effect, Layer } from "effect"
import type { ToolCall, ToolResult } from "../tool/result.ts"
import { CallPath, type Route } from "./call-path.ts"
import type { CallContext } from "./context.ts"

export { MAX_ATTEMPTS, RETRY_BACKOFF_MS } from "./attempt.ts"
export { BATCH_CONCURRENCY } from "./batching.ts"
export { CallPath, type CallPathShape, type Route, type RouteOptions, registryCatalog } from "./call-path.ts"
export type { ApprovalRequest, CallContext } from "./context.ts"
export type { Catalog, Invocation } from "./prepare.ts"

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
    /** Runs one call on a route (CallPath.run). */
    readonly run: (call: ToolCall, context: CallContext, route: Route) => Effect.Effect<ToolResult>
  }
>()("freecode/Orchestrator") {
  static readonly layer = Layer.effect(
    Orchestrator,
    Effect.gen(function* () {
      const path = yield* CallPath
      return Orchestrator.of({
        execute: (call, context) => path.run(call, context, path.ungated),
        executeBatch: (calls, context) => path.runBatch(calls, context, path.ungated),
        run: path.run
      })
    })
  )
}
