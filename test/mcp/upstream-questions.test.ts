/**
 * A server we connect to asking the person during a call (test/fixtures/mcp/asking-server.ts,
 * SDK 2.x over stdio): in the 2025 era with `elicitation/create` while the call is open, in the
 * 2026 era with `input_required` and a retry. The question reaches the system's asker, the
 * answer is held to the form (defaults filled in, bounds checked), a decline passes through,
 * and a host with nobody to ask refuses the call saying what was asked — the order is written
 * once per accepted call and never otherwise.
 */
import * as NodeFs from "node:fs"
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

const asking = (effects: string, era: "2025-11-25" | undefined): McpServerConfig => ({
  command: process.execPath,
  args: [ASKING, "--effects", effects],
  startupTimeout: 120_000,
  ...(era === undefined ? {} : { protocol: era })
})

const system = (servers: Record<string, McpServerConfig>, prompter: Layer.Layer<Prompter>) =>
  McpClients.layer({ servers }).pipe(Layer.provideMerge(testToolSystem({ root: NodeOs.tmpdir(), prompter })))

const lines = (file: string) =>
  NodeFs.existsSync(file) ? NodeFs.readFileSync(file, "utf8").trim().split("\n").filter(Boolean) : []

const accept = (content: Record<string, unknown>): FormOutcome => ({
  _tag: "Answer",
  answer: { action: "accept", content }
})

describe("questions from a server we connect to", () => {
  for (const era of ["2025-11-25", "2026-07-28"] as const) {
    it.live(
      `${era}: relayed to the person, held to the form, declined, refused; the order runs once per yes`,
      () =>
        Effect.gen(function* () {
          const dir = NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "freecode-asking-"))
          const effects = NodePath.join(dir, "effects")
          const asked: Array<FormRequest> = []
          const answers: Array<FormOutcome> = [
            accept({ quantity: 2 }),
            { _tag: "Answer", answer: { action: "decline" } },
            accept({ quantity: 12 }),
            accept({ quantity: 1, colour: "red" }),
            { _tag: "Answer", answer: { action: "accept" } }
          ]
          yield* Effect.gen(function* () {
            yield* (yield* McpClients).ready
            const [status] = yield* (yield* McpClients).status
            expect([status?.state, status?.protocol], status?.error).toEqual(["connected", era])

            const yes = yield* callTool("mcp__shop__order", { item: "apple" })
            // The default the person left alone (gift: false) is filled in.
            expect([yes.status, yes.modelOutput]).toEqual(["ok", 'ordered 2 apple {"quantity":2,"gift":false}'])
            expect(asked[0]).toMatchObject({ mode: "form", message: "How many apple?" })
            expect(lines(effects)).toHaveLength(1)

            const no = yield* callTool("mcp__shop__order", { item: "pear" })
            expect([no.status, no.modelOutput]).toEqual(["ok", "order declined"])

            // Outside the form: refused before the server sees it, whatever the server would do.
            for (const reason of ["quantity must be at most 9", "colour is not a field of the form"]) {
              const bad = yield* callTool("mcp__shop__order", { item: "plum" })
              expect(bad.status).toBe("error")
              expect(bad.modelOutput).toContain('asked the person "How many plum?"')
              expect(bad.modelOutput).toContain(reason)
            }

            const visit = yield* callTool("mcp__shop__visit", {})
            expect([visit.status, visit.modelOutput]).toEqual(["ok", "visit accept"])
            expect(asked.at(-1)).toMatchObject({ mode: "url", url: "https://shop.example/login" })
            // One accepted order, written once.
            expect(lines(effects).map((l) => JSON.parse(l))).toEqual([{ item: "apple", quantity: 2, gift: false }])
          }).pipe(
            Effect.provide(
              system({ shop: asking(effects, era === "2025-11-25" ? era : undefined) }, answeringPerson(answers, asked))
            )
          )
        }).pipe(Effect.scoped),
      180_000
    )

    it.live(
      `${era}: a host with nobody to ask refuses the call, naming the question`,
      () =>
        Effect.gen(function* () {
          const dir = NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "freecode-asking-"))
          const effects = NodePath.join(dir, "effects")
          yield* Effect.gen(function* () {
            yield* (yield* McpClients).ready
            const refused = yield* callTool("mcp__shop__order", { item: "fig" })
            expect(refused.status).toBe("error")
            expect(refused.modelOutput).toContain('The shop MCP server asked the person "How many fig?"')
            expect(refused.modelOutput).toContain("this session is not interactive")
            expect(lines(effects)).toEqual([])
          }).pipe(
            Effect.provide(
              system({ shop: asking(effects, era === "2025-11-25" ? era : undefined) }, Prompter.layerNonInteractive)
            )
          )
        }).pipe(Effect.scoped),
      180_000
    )
  }
})
