/** `question` over `freecode-tools mcp` (stdio): asked through MCP elicitation when the client can answer. */
import * as NodePath from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js"
import { Effect } from "effect"
import { makeProject, REPO } from "../cli/helpers.ts"

const question = {
  questions: [{ question: "Which database?", options: [{ label: "Postgres" }, { label: "SQLite" }] }]
}

/** Connects an SDK client to a real `freecode-tools mcp` child and asks one question through it. */
const ask = (elicitation: boolean) =>
  Effect.gen(function* () {
    const project = makeProject()
    yield* Effect.addFinalizer(() => Effect.sync(project.cleanup))
    const client = new Client(
      { name: "test", version: "1.0.0" },
      { capabilities: elicitation ? { elicitation: { form: {} } } : {} }
    )
    const asked: Array<string> = []
    if (elicitation) {
      client.setRequestHandler(ElicitRequestSchema, async (request) => {
        asked.push(request.params.message)
        return { action: "accept", content: { q1: "Postgres" } }
      })
    }
    yield* Effect.acquireRelease(
      Effect.promise(() =>
        client.connect(
          new StdioClientTransport({
            command: process.execPath,
            args: [NodePath.join(REPO, "src/cli/main.ts"), "mcp", "--root", project.root],
            stderr: "pipe"
          })
        )
      ),
      () => Effect.promise(() => client.close())
    )
    const result = yield* Effect.promise(() => client.callTool({ name: "question", arguments: question }))
    const text = (result.content as Array<{ type: string; text: string }>)[0]!.text
    return { text, asked }
  }).pipe(Effect.scoped)

describe("question over freecode-tools mcp", () => {
  it.live(
    "a client that supports elicitation is asked, and its answer reaches the model",
    () =>
      Effect.gen(function* () {
        const { text, asked } = yield* ask(true)
        expect(asked).toEqual(["Which database?"])
        expect(text).toBe("The person answered:\n- Which database? → Postgres")
      }),
    120_000
  )

  it.live(
    "a client without elicitation: the model is told nobody can answer and to decide itself",
    () =>
      Effect.gen(function* () {
        const { text } = yield* ask(false)
        expect(text).toContain("No person is available to answer (the MCP client does not support elicitation)")
      }),
    120_000
  )
})
