/**
 * The Orchestrator: the door (call-path.ts) its layer builds once on the ungated route — the
 * registry with the tool's own checks alone: the allow-all engine, no hooks, nobody to ask
 * (what a test or an embedder without a policy runs). The Dispatcher is the other door, with
 * every gate.
 */
import { Context, Effect, Layer } from "effect"
import type { ToolCall, ToolResult } from "../tool/result.ts"
import { CallPath } from "./call-path.ts"
import type { CallContext } from "./context.ts"
import { Route } from "./route.ts"

export { MAX_ATTEMPTS, RETRY_BACKOFF_MS } from "./attempt.ts"
export { BATCH_CONCURRENCY } from "./batching.ts"
export { CallPath, type CallPathShape, type Door } from "./call-path.ts"
export type { ApprovalRequest, CallContext } from "./context.ts"
export type { Catalog, Invocation } from "./prepare.ts"
export { Route, type RouteShape, registryCatalog } from "./route.ts"

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
  }
>()("freecode/Orchestrator") {
  static readonly layer = Layer.effect(
    Orchestrator,
    Effect.gen(function* () {
      const door = yield* (yield* CallPath).door
      return Orchestrator.of({ execute: door.run, executeBatch: door.runBatch })
    })
  ).pipe(Layer.provide(Route.ungated))
}
