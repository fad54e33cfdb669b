/**
 * A small tool loop on effect/ai's LanguageModel: ask the model, run the calls it makes through
 * the Dispatcher, give it the results, until it answers without calling a tool. The embedder
 * provides the model (any effect/ai provider's LanguageModel layer).
 */
import { Effect, Schema } from "effect"
// Per module, not the effect/ai index: that loads every ai module (MCP, chat, …), ~11 MB resident.
import * as LanguageModel from "effect/ai/LanguageModel"
import * as Prompt from "effect/ai/Prompt"
import type { DispatcherShape } from "../dispatch/dispatcher.ts"
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

export const runToolLoop = (
  options: LoopOptions
): Effect.Effect<LoopResult, AgentFailure, LanguageModel.LanguageModel> =>
  Effect.gen(function* () {
    const tools = yield* options.dispatcher.tools
    const toolkit = toolkitFrom(tools)
    let prompt = Prompt.make([
      { role: "system", content: options.system },
      { role: "user", content: options.prompt }
    ])
    let toolCalls = 0
    for (let turn = 1; turn <= options.maxTurns; turn++) {
      const response = yield* LanguageModel.generateText({
        prompt,
        toolkit,
        disableToolCallResolution: true,
        // Our Dispatcher validates arguments (and repairs a wrong-case name); the model gets its errors.
        toolCallValidation: "deferred"
      }).pipe(Effect.mapError((e) => new AgentFailure({ message: `the model failed: ${e.message}` })))
      prompt = Prompt.concat(prompt, Prompt.fromResponseParts(response.content))
      const calls = response.toolCalls
      if (calls.length === 0) return { text: response.text, turns: turn, toolCalls }
      toolCalls += calls.length
      const results = yield* options.dispatcher.dispatchBatch(
        calls.map((c) => ({ id: c.id, name: c.name, args: c.params })),
        { sessionId: options.sessionId }
      )
      prompt = Prompt.concat(
        prompt,
        Prompt.fromMessages([
          Prompt.toolMessage({
            content: results.map((r) =>
              Prompt.toolResultPart({
                id: r.id,
                name: r.tool,
                isFailure: r.status !== "ok",
                result: r.modelOutput,
                providerExecuted: false
              })
            )
          })
        ])
      )
    }
    return yield* new AgentFailure({
      message: `the sub-agent used all ${options.maxTurns} turns without finishing; give it a narrower task.`
    })
  })
