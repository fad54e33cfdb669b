/**
 * `agent`: hands a task to a sub-agent (SubagentRunner) and returns its final reply. Registered
 * only when a runner is available (`agentLayer`): without a model there is nobody to run it.
 */
import { Duration, Effect, Layer, Option, Schema } from "effect"
import { SubagentRunner } from "../agent/runner.ts"
import { ToolRegistry } from "../registry/registry.ts"
import { fail } from "../tool/errors.ts"
import { defineTool } from "../tool/tool.ts"

const Parameters = Schema.Struct({
  description: Schema.String.annotate({ description: "The task in 3-5 words (shown to the person)." }),
  prompt: Schema.String.annotate({
    description: "The whole task: the sub-agent sees nothing else of this conversation. Say what to return."
  }),
  subagent_type: Schema.String.annotate({
    description: "explore (reads only) or general (may do what you may), or a profile from freecode.json."
  })
})

export const AgentTool = defineTool({
  id: "agent",
  description:
    "Hand a self-contained task to a sub-agent with its own context, and get its final reply. Use explore to search and read widely without filling your context; general for a task that changes things. It never sees this conversation: put everything it needs in prompt.",
  parameters: Parameters,
  // It may run anything its profile allows, so it is never retried and never counted as read-only.
  mutates: true,
  retrySafe: false,
  interruptBehavior: "cancel",
  timeout: Duration.minutes(30),
  permissions: { operations: ["agent.spawn"] },
  execute: ({ description, prompt, subagent_type }, ctx) =>
    Effect.gen(function* () {
      if (prompt.trim() === "") return yield* fail("prompt is empty: describe the whole task for the sub-agent.")
      const runner = yield* SubagentRunner
      const result = yield* runner
        .run({ description, prompt, subagentType: subagent_type, parentSessionId: ctx.sessionId, callId: ctx.callId })
        .pipe(Effect.mapError((e) => fail(`The sub-agent failed: ${e.message}`)))
      return {
        title: `agent ${subagent_type}: ${description}`,
        output: result.text === "" ? "(the sub-agent replied with no text)" : result.text,
        metadata: { sessionId: result.sessionId, turns: result.turns, toolCalls: result.toolCalls }
      }
    })
})

/** Registers `agent` when a SubagentRunner is in the context; otherwise does nothing. */
export const agentLayer = Layer.effectDiscard(
  Effect.gen(function* () {
    const runner = yield* Effect.serviceOption(SubagentRunner)
    if (Option.isNone(runner)) return
    const registry = yield* ToolRegistry
    yield* registry.register(AgentTool).pipe(Effect.provideService(SubagentRunner, runner.value))
  }).pipe(Effect.orDie)
)
