/**
 * A small tool loop on effect/ai's LanguageModel: ask the model, run the calls it makes through
 * the Dispatcher, give it the results, until it answers without calling a tool. The embedder
 * provides the model (any effect/ai provider's LanguageModel layer). Before each request the
 * conversation's tool results go through the HistoryBudget: past it, the oldest become markers
 * naming the `output` call that brings them back, and stay those markers (a stable prefix).
 */
import { Effect, Schema } from "effect"
// Per module, not the effect/ai index: that loads every ai module (MCP, chat, …), ~11 MB resident.
import * as LanguageModel from "effect/ai/LanguageModel"
import * as Prompt from "effect/ai/Prompt"
import type { DispatcherShape } from "../dispatch/dispatcher.ts"
import { HistoryBudget } from "../output/history-budget.ts"
import { toolkitFrom } from "./toolkit.ts"

export class AgentFailure extends Schema.TaggedError<AgentFailure>()("AgentFailure", { message: Schema.String }) {}

export interface LoopOptions {
  /** The dispatcher the child's calls go through (already narrowed to its profile). */
  readonly dispatcher: DispatcherShape
  /** The child's own session: its calls are stored and reported under it. */
  readonly sessionId: string
  readonly system: string
  readonly prompt: string
  /** Model turns before the child is stopped. */
  readonly maxTurns: number
}

export interface LoopResult {
  readonly text: string
  readonly turns: number
  readonly toolCalls: number
}

/** One tool result as the conversation holds it; `content` becomes a marker once pruned. */
interface HeldResult {
  readonly id: string
  readonly name: string
  readonly isFailure: boolean
  content: string
}

const toolMessage = (results: ReadonlyArray<HeldResult>) =>
  Prompt.fromMessages([
    Prompt.toolMessage({
      content: results.map((r) =>
        Prompt.toolResultPart({
          id: r.id,
          name: r.name,
          isFailure: r.isFailure,
          result: r.content,
          providerExecuted: false
        })
      )
    })
  ])

export const runToolLoop = Effect.fnUntraced(function* (
  options: LoopOptions
): Effect.fn.Return<LoopResult, AgentFailure, LanguageModel.LanguageModel | HistoryBudget> {
  const tools = yield* options.dispatcher.tools
  const budget = yield* HistoryBudget
  const toolkit = toolkitFrom(tools)
  const start = Prompt.make([
    { role: "system", content: options.system },
    { role: "user", content: options.prompt }
  ])
  const exchanges: Array<{ readonly response: Prompt.Prompt; readonly results: ReadonlyArray<HeldResult> }> = []
  /** The conversation so far, its tool results held to the history budget. */
  const conversation = Effect.gen(function* () {
    const held = exchanges.flatMap((e) => e.results)
    const budgeted = yield* budget.apply(
      options.sessionId,
      held.map((r) => ({ id: r.id, tool: r.name, content: r.content }))
    )
    budgeted.results.forEach((r, i) => {
      held[i]!.content = r.content
    })
    return exchanges.reduce((p, e) => Prompt.concat(Prompt.concat(p, e.response), toolMessage(e.results)), start)
  })
  let toolCalls = 0
  for (let turn = 1; turn <= options.maxTurns; turn++) {
    const response = yield* LanguageModel.generateText({
      prompt: yield* conversation,
      toolkit,
      disableToolCallResolution: true,
      // Our Dispatcher validates arguments (and repairs a wrong-case name); the model gets its errors.
      toolCallValidation: "deferred"
    }).pipe(Effect.mapError((e) => new AgentFailure({ message: `the model failed: ${e.message}` })))
    const calls = response.toolCalls
    if (calls.length === 0) return { text: response.text, turns: turn, toolCalls }
    toolCalls += calls.length
    const results = yield* options.dispatcher.dispatchBatch(
      calls.map((c) => ({ id: c.id, name: c.name, args: c.params })),
      { sessionId: options.sessionId }
    )
    exchanges.push({
      response: Prompt.fromResponseParts(response.content),
      results: results.map((r) => ({ id: r.id, name: r.tool, isFailure: r.status !== "ok", content: r.modelOutput }))
    })
  }
  return yield* new AgentFailure({
    message: `the sub-agent used all ${options.maxTurns} turns without finishing; give it a narrower task.`
  })
})
