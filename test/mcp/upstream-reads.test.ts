/**
 * A server we connect to asking the person while a resource is read or a prompt is fetched
 * (test/fixtures/mcp/asking-server.ts with `--reads`, SDK 2.x over stdio), as during a tool
 * call: in the 2025 era with `elicitation/create` while the request is open, in the 2026 era with
 * `input_required` and a retry. The question reaches the system's asker and the answer shapes
 * what comes back; a host with nobody to ask refuses the read, naming the question.
 */
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { testToolSystem } from "../../layers/test.ts"
import { McpClients } from "../../src/mcp/clients.ts"
import type { McpServerConfig } from "../../src/mcp/config.ts"
import type { FormOutcome, FormRequest } from "../../src/prompt/form.ts"
import { Prompter } from "../../src/prompt/prompter.ts"
import { answeringPerson, callTool } from "./eras-helpers.ts"
import { REPO } from "./helpers.ts"

const ASKING = NodePath.join(REPO, "test/fixtures/mcp/asking-server.ts")

const asking = (era: "2025-11-25" | "2026-07-28"): McpServerConfig => ({
  command: process.execPath,
  args: [ASKING, "--reads"],
  startupTimeout: 120_000,
  protocol: era
})

const system = (era: "2025-11-25" | "2026-07-28", prompter: Layer.Layer<Prompter>) =>
  McpClients.layer({ servers: { shop: asking(era) } }).pipe(
    Layer.provideMerge(testToolSystem({ root: NodeOs.tmpdir(), prompter }))
  )

const accept = (content: Record<string, unknown>): FormOutcome => ({
  _tag: "Answer",
  answer: { action: "accept", content }
})

const read = () => callTool("read_mcp_resource", { server: "shop", uri: "shop://cart" })

const textOf = (prompt: unknown) =>
  (prompt as { messages: Array<{ content: { text: string } }> }).messages[0]!.content.text

describe("questions from a server during a read", () => {
  for (const era of ["2025-11-25", "2026-07-28"] as const) {
    it.live(
      `${era}: resources/read asks the person; the answer shapes the contents, a decline passes through`,
      () =>
        Effect.gen(function* () {
          const asked: Array<FormRequest> = []
          const answers: Array<FormOutcome> = [
            accept({ owner: "ana" }),
            { _tag: "Answer", answer: { action: "decline" } }
          ]
          yield* Effect.gen(function* () {
            yield* (yield* McpClients).ready
            const [status] = yield* (yield* McpClients).status
            expect([status?.state, status?.protocol], status?.error).toEqual(["connected", era])
            const yes = yield* read()
            expect([yes.status, yes.modelOutput]).toEqual(["ok", "cart of ana"])
            expect(asked[0]).toMatchObject({ mode: "form", message: "Whose cart?" })
            const no = yield* read()
            expect([no.status, no.modelOutput]).toEqual(["ok", "cart declined"])
          }).pipe(Effect.provide(system(era, answeringPerson(answers, asked))))
        }).pipe(Effect.scoped),
      180_000
    )

    it.live(
      `${era}: prompts/get asks the person; with nobody to ask it is refused, naming the question`,
      () =>
        Effect.gen(function* () {
          const asked: Array<FormRequest> = []
          yield* Effect.gen(function* () {
            const clients = yield* McpClients
            yield* clients.ready
            const prompt = yield* clients.getPrompt("shop", "greeting")
            expect(textOf(prompt)).toBe("Hello, bo")
            expect(asked[0]).toMatchObject({ mode: "form", message: "Greet whom?" })
          }).pipe(Effect.provide(system(era, answeringPerson([accept({ who: "bo" })], asked))))

          yield* Effect.gen(function* () {
            const clients = yield* McpClients
            yield* clients.ready
            const refused = yield* Effect.flip(clients.getPrompt("shop", "greeting"))
            expect(refused.message).toContain('The shop MCP server asked the person "Greet whom?"')
            expect(refused.message).toContain("this session is not interactive")
            const unread = yield* read()
            expect(unread.status).toBe("error")
            expect(unread.modelOutput).toContain('asked the person "Whose cart?"')
          }).pipe(Effect.provide(system(era, Prompter.layerNonInteractive)))
        }).pipe(Effect.scoped),
      180_000
    )
  }
})
