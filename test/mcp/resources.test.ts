/**
 * MCP resources for the model, against real servers of both eras (test/fixtures/mcp/eras-server.ts:
 * a text, a PNG blob, a 300 KB text, a template, a tool that answers with a resource_link, a
 * prompt): the two resource tools appear only while a connected server has resources, go through
 * the call path (budget, stored output, permissions with a `server:` rule), and prompts are
 * listed for an embedder.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Option } from "effect"
import { McpClients } from "../../src/mcp/clients.ts"
import { LIST_RESOURCES_TOOL, READ_RESOURCE_TOOL } from "../../src/mcp/resource-names.ts"
import { OutputStore } from "../../src/output/store.ts"
import { callTool, erasStdio, startErasHttp, statusOf, toolIds, until } from "./eras-helpers.ts"
import { systemWithMcp } from "./helpers.ts"

const PNG_BASE64 = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
const PNG_BYTES = Buffer.from(PNG_BASE64, "base64").length
// The fixture's notes://big.log.
const BIG = Array.from({ length: 6000 }, (_, i) => `line ${i + 1}: ${"x".repeat(40)}`).join("\n")

describe("MCP resources as tools", () => {
  it.live(
    "no connected server with resources: no resource tools",
    () =>
      Effect.gen(function* () {
        yield* (yield* McpClients).ready
        expect((yield* statusOf("plain")).state).toBe("connected")
        const ids = yield* toolIds
        expect(ids).toContain("mcp__plain__echo")
        expect(ids).not.toContain(LIST_RESOURCES_TOOL)
        expect(ids).not.toContain(READ_RESOURCE_TOOL)
        expect(yield* (yield* McpClients).prompts).toEqual([])
      }).pipe(Effect.provide(systemWithMcp({ servers: { plain: erasStdio(["--sdk", "2", "--no-resources"]) } }))),
    120_000
  )

  it.live(
    "list, read text, blobs, templates, a large text within the budget, resource links; both eras; prompts",
    () =>
      Effect.gen(function* () {
        const legacyHttp = yield* startErasHttp(["--sdk", "1"])
        yield* Effect.gen(function* () {
          const clients = yield* McpClients
          yield* clients.ready
          const all = yield* clients.status
          expect(all.map((s) => [s.name, s.state, s.protocol, s.resources])).toEqual([
            ["docs", "connected", "2026-07-28", true],
            ["old", "connected", "2025-11-25", true]
          ])
          expect(yield* toolIds).toEqual(expect.arrayContaining([LIST_RESOURCES_TOOL, READ_RESOURCE_TOOL]))

          const listed = yield* callTool(LIST_RESOURCES_TOOL, {})
          expect(listed.status).toBe("ok")
          expect(listed.modelOutput).toContain("docs:\n  notes://readme")
          expect(listed.modelOutput).toContain("old:\n  notes://readme")
          expect(listed.modelOutput).toContain(`"readme" (text/plain) — The project's readme.`)
          expect(listed.modelOutput).toContain("notes://day/{date}")
          const one = yield* callTool(LIST_RESOURCES_TOOL, { server: "old" })
          expect(one.modelOutput).not.toContain("docs:")
          const unknown = yield* callTool(LIST_RESOURCES_TOOL, { server: "nope" })
          expect(unknown.status).toBe("error")
          expect(unknown.modelOutput).toContain("Servers with resources: docs, old.")

          for (const server of ["docs", "old"]) {
            const text = yield* callTool(READ_RESOURCE_TOOL, { server, uri: "notes://readme" })
            expect([text.status, text.modelOutput]).toEqual(["ok", "Read me first.\n"])

            // A blob: described in one line, kept whole.
            const blob = yield* callTool(READ_RESOURCE_TOOL, { server, uri: "notes://logo.png" })
            expect(blob.status).toBe("ok")
            expect(blob.modelOutput).toMatch(
              new RegExp(
                `^\\[notes://logo\\.png: image/png, ${PNG_BYTES} bytes, sha256 [0-9a-f]{64}; kept whole in metadata\\.resources\\[0\\]\\]$`
              )
            )
            expect((blob.metadata.resources as Array<{ blob: string }>)[0]?.blob).toBe(PNG_BASE64)

            // A template filled in.
            const day = yield* callTool(READ_RESOURCE_TOOL, { server, uri: "notes://day/2026-01-02" })
            expect(day.modelOutput).toBe("# 2026-01-02\nnothing happened\n")

            // A resource the server does not have: its error, as the model reads it.
            const missing = yield* callTool(READ_RESOURCE_TOOL, { server, uri: "notes://nothing" })
            expect(missing.status).toBe("error")
            expect(missing.modelOutput).toContain(`The ${server} MCP server refused resources/read of notes://nothing`)

            // A resource_link: the answer says how to follow it, and following it reads it.
            const report = yield* callTool(`mcp__${server}__report`, {})
            expect(report.modelOutput).toContain('[resource link: notes://report/1 "report 1" (text/plain)]')
            expect(report.modelOutput).toContain(
              `(read a linked resource with ${READ_RESOURCE_TOOL} {"server":"${server}","uri":"notes://report/1"})`
            )
            const followed = yield* callTool(READ_RESOURCE_TOOL, { server, uri: "notes://report/1" })
            expect(followed.modelOutput).toBe("report: all green\n")
          }

          // 300 KB of text: the model's copy is cut to the budget; the whole is stored.
          const big = yield* callTool(READ_RESOURCE_TOOL, { server: "docs", uri: "notes://big.log" })
          expect(big.status).toBe("ok")
          expect(big.modelOutput.length).toBeLessThan(100_000)
          expect(big.modelOutput).toContain("line 1: ")
          expect(big.modelOutput).toContain("line 6000: ")
          expect(big.modelOutput).toContain("output")
          const stored = Option.getOrThrow(yield* (yield* OutputStore).get("s", big.outputId!))
          expect(stored.chars).toBe(BIG.length)

          // Prompts, for an embedder: listed from both servers, one fetched.
          const prompts = yield* clients.prompts
          expect(prompts.map((p) => [p.server, p.name, p.arguments.map((a) => [a.name, a.required])])).toEqual([
            ["docs", "review", [["focus", true]]],
            ["old", "review", [["focus", true]]]
          ])
          const got = (yield* clients.getPrompt("old", "review", { focus: "tests" })) as {
            messages: Array<{ content: { text: string } }>
          }
          expect(got.messages[0]?.content.text).toBe("Review review with focus on tests.")
          const noPrompts = yield* Effect.flip(clients.getPrompt("nope", "review"))
          expect(noPrompts.message).toContain('No connected MCP server named "nope" has prompts.')
        }).pipe(
          Effect.provide(systemWithMcp({ servers: { docs: erasStdio(["--sdk", "2"]), old: { url: legacyHttp.url } } }))
        )
      }).pipe(Effect.scoped),
    180_000
  )

  it.live(
    "reading asks unless a server: rule allows the server; listing never asks; the tools leave with the last such server",
    () =>
      Effect.gen(function* () {
        yield* (yield* McpClients).ready
        // No one to ask: a read that needs approval is refused; the allowed server's is not.
        const asked = yield* callTool(READ_RESOURCE_TOOL, { server: "other", uri: "notes://readme" }, false)
        expect(asked.status).toBe("denied")
        expect(asked.modelOutput).toContain(`${READ_RESOURCE_TOOL} requires approval`)
        const allowed = yield* callTool(READ_RESOURCE_TOOL, { server: "docs", uri: "notes://readme" }, false)
        expect([allowed.status, allowed.modelOutput]).toEqual(["ok", "Read me first.\n"])
        expect((yield* callTool(LIST_RESOURCES_TOOL, {}, false)).status).toBe("ok")

        // Both servers gone: the resource tools go with them.
        yield* callTool("mcp__docs__crash", {})
        yield* callTool("mcp__other__crash", {})
        yield* until("both servers down", toolIds, (ids) => !ids.some((id) => id.startsWith("mcp__")))
        const ids = yield* toolIds
        expect(ids).not.toContain(LIST_RESOURCES_TOOL)
        expect(ids).not.toContain(READ_RESOURCE_TOOL)
      }).pipe(
        Effect.provide(
          systemWithMcp({
            servers: { docs: erasStdio(["--sdk", "2"]), other: erasStdio(["--sdk", "1"]) },
            restart: { initialDelay: "10 minutes" },
            config: { permissions: { allow: [`${READ_RESOURCE_TOOL}(server:docs)`] } }
          })
        )
      ),
    180_000
  )
})
