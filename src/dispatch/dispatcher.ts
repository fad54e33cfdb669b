/**
 * What a loop (and the CLI, and the MCP server) calls for each model tool call. Today it hands
 * calls to the orchestrator; the permission engine and the PreToolUse/PostToolUse hooks wrap
 * around it here, one level above the mechanical path, so no caller has to change when they land.
 */
import { Context, Effect, Layer } from "effect"
import { type CallContext, Orchestrator } from "../orchestrator/orchestrator.ts"
import type { ToolCall, ToolResult } from "../tool/result.ts"

export class Dispatcher extends Context.Service<
  Dispatcher,
  {
    readonly dispatch: (call: ToolCall, context: CallContext) => Effect.Effect<ToolResult>
    /** One model turn: the calls run in planned batches, results in call order. */
    readonly dispatchBatch: (
      calls: ReadonlyArray<ToolCall>,
      context: CallContext
    ) => Effect.Effect<ReadonlyArray<ToolResult>>
  }
>()("freecode/Dispatcher") {
  static readonly layer = Layer.effect(
    Dispatcher,
    Effect.gen(function* () {
      const orchestrator = yield* Orchestrator
      return Dispatcher.of({ dispatch: orchestrator.execute, dispatchBatch: orchestrator.executeBatch })
    })
  )
}
