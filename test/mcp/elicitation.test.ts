/** `question` over `freecode-tools mcp`: asked through MCP elicitation when the client can answer. */

import * as NodePath from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js"
import { Effect } from "effect"
import { makeProject, REPO } from "../cli/helpers.ts"
import { startHttp, withToken } from "./helpers.ts"

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

  it.live(
    "over HTTP each session's own client is asked: two sessions, two answers",
    () =>
      Effect.gen(function* () {
        const project = makeProject()
        yield* Effect.addFinalizer(() => Effect.sync(project.cleanup))
        const server = yield* Effect.promise(() =>
          startHttp(NodePath.join(REPO, "src/cli/main.ts"), ["mcp", "--http", "0", "--root", project.root])
        )
        yield* Effect.addFinalizer(() => Effect.sync(() => server.child.kill("SIGTERM")))
        const connect = (answer: string) =>
          Effect.acquireRelease(
            Effect.promise(async () => {
              const client = new Client(
                { name: `client-${answer}`, version: "1.0.0" },
                { capabilities: { elicitation: { form: {} } } }
              )
              client.setRequestHandler(ElicitRequestSchema, async () => ({
                action: "accept",
                content: { q1: answer }
              }))
              await client.connect(new StreamableHTTPClientTransport(new URL(server.url), withToken(server.token)))
              return client
            }),
            (client) => Effect.promise(() => client.close())
          )
        const first = yield* connect("Postgres")
        const second = yield* connect("SQLite")
        const textOf = (result: object) => (result as { content: Array<{ text: string }> }).content[0]!.text
        const a = yield* Effect.promise(() => second.callTool({ name: "question", arguments: question }))
        const b = yield* Effect.promise(() => first.callTool({ name: "question", arguments: question }))
        expect(textOf(a)).toBe("The person answered:\n- Which database? → SQLite")
        expect(textOf(b)).toBe("The person answered:\n- Which database? → Postgres")
      }).pipe(Effect.scoped),
    120_000
  )
})
