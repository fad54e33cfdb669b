/**
 * Our tools as an effect/ai Toolkit: each tool the Dispatcher offers becomes a dynamic tool with
 * its JSON Schema and description, so any effect/ai provider declares exactly what the registry
 * holds. `dispatcherToolkit` also gives the handlers: an effect/ai app that lets
 * `LanguageModel.generateText` resolve calls gets our permissions, hooks, budgets and output
 * store, because every call goes through the Dispatcher.
 */
import { Effect, Schema } from "effect"
// Per module, not the effect/ai index: that loads every ai module (MCP, chat, …), ~11 MB resident.
import * as AiTool from "effect/ai/Tool"
import * as Toolkit from "effect/ai/Toolkit"
import { Dispatcher, type DispatcherShape } from "../dispatch/dispatcher.ts"
import type { CallContext } from "../orchestrator/orchestrator.ts"
import type { Tool } from "../tool/tool.ts"

const declare = (tool: Tool<unknown>) =>
  AiTool.dynamic(tool.id, {
    description: tool.description,
    parameters: tool.inputSchema as unknown as Record<string, unknown>,
    // The model's copy of the result (status and errors are in its text).
    success: Schema.String
  })

/** Declarations only: for a loop that runs the calls itself (loop.ts). */
export const toolkitFrom = (tools: ReadonlyArray<Tool<unknown>>) => Toolkit.make(...tools.map(declare))

/**
 * The toolkit of a dispatcher's tools and a layer of handlers that dispatch each call under
 * `context` (its session id, approvals). Provide the layer to `generateText({ toolkit })`.
 */
export const dispatcherToolkit = Effect.fnUntraced(function* (context: CallContext, dispatcher?: DispatcherShape) {
  const d = dispatcher ?? (yield* Dispatcher)
  const tools = yield* d.tools
  const toolkit = toolkitFrom(tools)
  const handlers = Object.fromEntries(
    tools.map((tool) => [
      tool.id,
      (params: unknown, meta: { readonly toolCallId?: string | undefined }) =>
        Effect.map(
          d.dispatch({ id: meta.toolCallId ?? `call_${tool.id}`, name: tool.id, args: params }, context),
          (result) => result.modelOutput
        )
    ])
  )
  return { toolkit, handlers: toolkit.toLayer(handlers as never) }
})
