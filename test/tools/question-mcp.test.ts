/** The MCP Prompter against a real MCP client and server (the SDK's own, linked in memory). */

import { describe, expect, it } from "@effect/vitest"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js"
import { Server } from "@modelcontextprotocol/sdk/server/index.js"
import { ElicitRequestSchema, type ElicitResult } from "@modelcontextprotocol/sdk/types.js"
import { Effect } from "effect"
import { InputRound } from "../../src/prompt/input-round.ts"
import { mcpPrompter } from "../../src/prompt/mcp-elicitation.ts"
import type { Question } from "../../src/prompt/prompter.ts"

const questions: ReadonlyArray<Question> = [
  {
    question: "Which database?",
    header: "Storage",
    options: [{ label: "SQLite", description: "embedded" }, { label: "Postgres" }]
  },
  { question: "Which checks?", options: [{ label: "lint" }, { label: "types" }], multiple: true }
]

/** A connected server and a client that answers elicitations with `answer` (or lacks the capability). */
const connect = (answer: ((params: unknown) => ElicitResult) | undefined) =>
  Effect.promise(async () => {
    const server = new Server({ name: "freecode-test", version: "0" }, { capabilities: {} })
    const client = new Client(
      { name: "client", version: "0" },
      { capabilities: answer === undefined ? {} : { elicitation: { form: {} } } }
    )
    if (answer !== undefined) client.setRequestHandler(ElicitRequestSchema, async (request) => answer(request.params))
    const [a, b] = InMemoryTransport.createLinkedPair()
    await Promise.all([server.connect(a), client.connect(b)])
    return { server, close: () => Promise.all([client.close(), server.close()]) }
  })

describe("Prompter over MCP elicitation", () => {
  it.live("the questions become one form; the person's picks and typed answers come back", () =>
    Effect.gen(function* () {
      let form: unknown
      const { server, close } = yield* connect((params) => {
        form = params
        return { action: "accept", content: { q1: "Postgres", q2: ["lint", "types"], q2_own: " and benchmarks " } }
      })
      const outcome = yield* mcpPrompter(() => server).ask(questions)
      yield* Effect.promise(close)
      expect(outcome).toEqual({
        _tag: "Answered",
        answers: [
          { question: "Which database?", selected: ["Postgres"] },
          { question: "Which checks?", selected: ["lint", "types"], custom: "and benchmarks" }
        ]
      })
      expect(form).toMatchObject({
        message: "2 questions from the agent",
        requestedSchema: {
          properties: {
            q1: {
              type: "string",
              title: "Storage",
              oneOf: [{ const: "SQLite", title: "SQLite — embedded" }, { const: "Postgres" }]
            },
            q2: { type: "array", items: { anyOf: [{ const: "lint" }, { const: "types" }] } },
            q2_own: { type: "string" }
          }
        }
      })
    })
  )

  it.live("a declined or cancelled form is Dismissed", () =>
    Effect.gen(function* () {
      for (const action of ["decline", "cancel"] as const) {
        const { server, close } = yield* connect(() => ({ action }))
        expect(yield* mcpPrompter(() => server).ask(questions)).toEqual({ _tag: "Dismissed" })
        yield* Effect.promise(close)
      }
    })
  )

  it.live("a client without elicitation, or no connection yet, is Unavailable, saying why", () =>
    Effect.gen(function* () {
      const { server, close } = yield* connect(undefined)
      expect(yield* mcpPrompter(() => server).ask(questions)).toEqual({
        _tag: "Unavailable",
        reason: "the MCP client does not support elicitation"
      })
      yield* Effect.promise(close)
      expect((yield* mcpPrompter(() => undefined).ask(questions))._tag).toBe("Unavailable")
    })
  )
  it.live("an answer that does not fit the form is not an answer, in either era", () =>
    Effect.gen(function* () {
      const misfits: ReadonlyArray<[Record<string, unknown>, string]> = [
        [{ q1: "Postgres", q1_own: true }, "q1_own must be text"],
        [{ q1: "MySQL" }, "q1 must be one of the offered options"],
        [{ q1: ["Postgres"] }, "q1 must be one of the offered options"],
        [{ q2: "lint" }, "q2 must be a list of the offered options"],
        [{ q2: ["lint", 3] }, "q2 must be a list of the offered options"],
        [{ q1: "Postgres", approve: "yes" }, "approve is not a field of the form"]
      ]
      for (const [content, problem] of misfits) {
        // 2026: the answer comes back with the client's retry, through the call's InputRound.
        const round = mcpPrompter(() => undefined)
          .ask(questions)
          .pipe(
            Effect.provideService(InputRound, {
              elicit: () => Effect.succeed({ _tag: "Answer" as const, answer: { action: "accept" as const, content } })
            })
          )
        expect(yield* round).toEqual({
          _tag: "Unavailable",
          reason: `the client's answer does not fit the form: ${problem}`
        })
        // 2025: an elicitation request; whoever checks first, the answer is refused.
        const { server, close } = yield* connect(() => ({ action: "accept", content }) as ElicitResult)
        expect((yield* mcpPrompter(() => server).ask(questions))._tag).toBe("Unavailable")
        yield* Effect.promise(close)
      }
    })
  )
})
