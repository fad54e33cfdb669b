/**
 * Embedding freecode-tools in an Effect program: give the model the tools, run one turn of
 * its tool calls, and put what the model should read into the history.
 *   node examples/embed.ts [project-root]
 */
import { Effect } from "effect"
import { Dispatcher, type ToolCall, ToolRegistry, ToolSystem } from "../src/index.ts"

const program = Effect.gen(function* () {
  // 1. The tools parameter of the request, in the provider's shape (stable order, cache breakpoint last).
  const registry = yield* ToolRegistry
  const tools = yield* registry.toolsParam("anthropic")

  // 2. The model answers with tool calls (here, written by hand).
  const calls: ReadonlyArray<ToolCall> = [
    { id: "toolu_1", name: "glob", args: { pattern: "**/*.md" } },
    { id: "toolu_2", name: "grep", args: { pattern: "freecode", include: "*.md", head_limit: "5" } }
  ]

  // 3. One turn: concurrency-safe calls run together, results come back in call order.
  const dispatcher = yield* Dispatcher
  const results = yield* dispatcher.dispatchBatch(calls, { sessionId: "example" })

  // 4. Only modelOutput goes into the history; the full output stays in the store.
  const history = results.map((r) => ({
    type: "tool_result",
    tool_use_id: r.id,
    is_error: r.status !== "ok",
    content: r.modelOutput
  }))
  return { declared: tools.length, history }
})

const root = process.argv[2] ?? process.cwd()
const { declared, history } = await Effect.runPromise(program.pipe(Effect.provide(ToolSystem.layer({ root }))))
console.log(`${declared} tools declared`)
for (const entry of history) console.log(JSON.stringify(entry))
