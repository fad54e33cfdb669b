/**
 * An effect/ai app with our tools: the registry as an effect/ai Toolkit whose handlers go through
 * the Dispatcher (permissions, hooks, budgets, the output store), and the `agent` tool running a
 * sub-agent on the same model.
 *   node examples/effect-ai.ts [project-root]
 *
 * `model` stands in for a provider so the example runs offline: in an app it is any effect/ai
 * provider's LanguageModel layer (for example `OpenAiLanguageModel.model(...)` from
 * @effect/ai-openai with its client layer).
 */
import { Effect, Layer, Stream } from "effect"
import { LanguageModel } from "effect/ai"
import { Dispatcher, dispatcherToolkit, ToolSystem } from "../src/index.ts"

/** A stand-in model: first turn reads README.md, second turn answers. */
const model = Layer.effect(
  LanguageModel.LanguageModel,
  Effect.suspend(() => {
    let turn = 0
    const finish = { type: "finish", reason: "stop", usage: { inputTokens: { total: 1 }, outputTokens: { total: 1 } } }
    return LanguageModel.make({
      generateText: () =>
        Effect.sync(
          () =>
            (++turn % 2 === 1
              ? [{ type: "tool-call", id: `call_${turn}`, name: "read", params: { filePath: "README.md" } }, finish]
              : [{ type: "text", text: "README.md read." }, finish]) as never
        ),
      streamText: () => Stream.empty
    })
  })
)

const program = Effect.gen(function* () {
  // 1. Our tools as an effect/ai Toolkit; effect/ai resolves the model's calls through our handlers.
  const { toolkit, handlers } = yield* dispatcherToolkit({ sessionId: "app" })
  const response = yield* LanguageModel.generateText({ prompt: "Read README.md", toolkit }).pipe(
    Effect.provide(handlers)
  )
  for (const r of response.toolResults) console.log(`${r.name}: ${String(r.result).split("\n")[0]}`)

  // 2. The `agent` tool: a sub-agent (read-only "explore") runs its own tool loop on the model.
  const dispatcher = yield* Dispatcher
  const child = yield* dispatcher.dispatch(
    {
      id: "a1",
      name: "agent",
      args: { description: "read the README", prompt: "Read README.md.", subagent_type: "explore" }
    },
    // agent changes what its profile allows, so it needs approval: here, granted.
    { sessionId: "app", approve: () => Effect.succeed(true) }
  )
  console.log(`agent: ${child.status}: ${child.modelOutput}`)
})

const root = process.argv[2] ?? process.cwd()
await Effect.runPromise(
  program.pipe(
    Effect.provide(model),
    // `agent: { model }` registers the agent tool with the default runner on that model.
    Effect.provide(ToolSystem.layer({ root, agent: { model } }))
  )
)
