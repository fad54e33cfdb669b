/**
 * One `mcp --http` server, two eras at once: a 2026-07-28 client (SDK 2.x, pinned to the
 * revision: `server/discover`, no initialize, no session) and a 2025-11-25 client (SDK 1.32,
 * initialize and a session) list and call the same tools; the 2026 client hears a registry
 * change through `subscriptions/listen`; the token and the body cap hold for both.
 */
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Client as ModernClient, StreamableHTTPClientTransport as ModernTransport } from "@modelcontextprotocol/client"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { Context, Effect, Layer, Schema } from "effect"
import { testToolSystem } from "../../layers/test.ts"
import { serveHttp } from "../../src/mcp/transports.ts"
import { ToolRegistry } from "../../src/registry/registry.ts"
import { Sessions } from "../../src/session/sessions.ts"
import { defineTool } from "../../src/tool/tool.ts"
import { LsTool } from "../../src/tools/ls.ts"
import { ReadTool } from "../../src/tools/read.ts"
import { withToken } from "./helpers.ts"

const root = NodeFs.realpathSync(NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "freecode-eras-")))
NodeFs.writeFileSync(NodePath.join(root, "notes.txt"), "alpha\nbeta\n")

type Text = { type: string; text?: string }
const textOf = (result: unknown) =>
  (((result as { content?: unknown }).content ?? []) as Array<Text>).map((c) => c.text ?? "").join("\n")

const served = Effect.gen(function* () {
  const system = yield* Layer.build(testToolSystem({ root, tools: [LsTool, ReadTool] }))
  const serving = yield* serveHttp(system, 0)
  if (serving.auth.kind !== "token") throw new Error("serveHttp serves with a token by default")
  return { serving, token: serving.auth.token, system }
})

const modernClient = (url: string, token: string | undefined) =>
  Effect.acquireRelease(
    Effect.promise(async () => {
      const client = new ModernClient(
        { name: "modern-test", version: "1.0.0" },
        { versionNegotiation: { mode: { pin: "2026-07-28" } } }
      )
      await client.connect(new ModernTransport(new URL(url), withToken(token)))
      return client
    }),
    (client) => Effect.promise(() => client.close().catch(() => undefined))
  )

describe("mcp --http serves both eras", () => {
  it.live(
    "a 2026-07-28 client and a 2025-11-25 client on one server at once",
    () =>
      Effect.gen(function* () {
        const { serving, token, system } = yield* served
        const sessions = Context.get(system, Sessions)

        const legacy = new Client({ name: "legacy-test", version: "1.0.0" })
        yield* Effect.promise(() =>
          legacy.connect(new StreamableHTTPClientTransport(new URL(serving.url), withToken(token)))
        )
        yield* Effect.addFinalizer(() => Effect.promise(() => legacy.close()))
        expect(legacy.getServerVersion()?.name).toBe("freecode-tools")

        const modern = yield* modernClient(serving.url, token)
        expect(modern.getNegotiatedProtocolVersion()).toBe("2026-07-28")
        expect(modern.getServerVersion()?.name).toBe("freecode-tools")
        // The 2026 client opened no MCP session; the 2025 one did.
        expect(sessions.counts().mcpHttp).toBe(1)

        const [modernTools, legacyTools] = yield* Effect.promise(() =>
          Promise.all([modern.listTools(), legacy.listTools()])
        )
        expect(modernTools.tools.map((t) => t.name).sort()).toEqual(legacyTools.tools.map((t) => t.name).sort())
        expect(modernTools.tools.find((t) => t.name === "read")?.annotations?.readOnlyHint).toBe(true)
        // The 2026 list carries its cache hint.
        expect([
          (modernTools as { ttlMs?: number }).ttlMs,
          (modernTools as { cacheScope?: string }).cacheScope
        ]).toEqual([60_000, "private"])

        const [a, b] = yield* Effect.promise(() =>
          Promise.all([
            modern.callTool({ name: "read", arguments: { filePath: "notes.txt" } }),
            legacy.callTool({ name: "read", arguments: { filePath: "notes.txt" } })
          ])
        )
        expect(textOf(a)).toContain("beta")
        expect(textOf(b)).toContain("beta")
        const unknown = yield* Effect.promise(() => modern.callTool({ name: "nope", arguments: {} }))
        expect(unknown.isError).toBe(true)

        // subscriptions/listen: a tool registered now reaches the 2026 client as list_changed.
        let changed = 0
        modern.setNotificationHandler("notifications/tools/list_changed", () => {
          changed++
        })
        const subscription = yield* Effect.promise(() => modern.listen({ toolsListChanged: true }))
        expect(subscription.honoredFilter.toolsListChanged).toBe(true)
        const registry = Context.get(system, ToolRegistry)
        yield* registry.registerScoped(
          defineTool({
            id: "late_tool",
            description: "Registered after the clients connected.",
            parameters: Schema.Struct({}),
            execute: () => Effect.succeed({ title: "late", output: "late" })
          })
        )
        for (let i = 0; i < 200 && changed === 0; i++) yield* Effect.sleep("50 millis")
        expect(changed).toBeGreaterThan(0)
        const relisted = yield* Effect.promise(() => modern.listTools({}, { cacheMode: "bypass" } as never))
        expect(relisted.tools.map((t) => t.name)).toContain("late_tool")
        yield* Effect.promise(() => subscription.close())
      }).pipe(Effect.scoped),
    120_000
  )

  it.live(
    "the token holds for the 2026 era too",
    () =>
      Effect.gen(function* () {
        const { serving } = yield* served
        const refused = yield* Effect.exit(modernClient(serving.url, undefined))
        expect(refused._tag).toBe("Failure")
        const wrong = yield* Effect.exit(modernClient(serving.url, "not-the-token-0123456789"))
        expect(wrong._tag).toBe("Failure")
      }).pipe(Effect.scoped),
    60_000
  )
})
