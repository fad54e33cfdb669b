/**
 * `freecode-tools mcp` over stdio, both eras from one command: a 2026-07-28 client (SDK 2.x,
 * pinned: `server/discover`, no initialize) and a 2025-11-25 client (SDK 1.32) each list, call,
 * answer an approval (the 2026 one in-band, through `input_required` and a retry; the 2025 one
 * through an elicitation request) and hear a tool-list change (the 2026 one through
 * `subscriptions/listen`, the 2025 one unsolicited). The approved call runs once either way.
 */
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Client as ModernClient } from "@modelcontextprotocol/client"
import { StdioClientTransport as ModernStdio } from "@modelcontextprotocol/client/stdio"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { ElicitRequestSchema, ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js"
import { Effect } from "effect"
import { COUNT_LOG } from "../fixtures/mcp/approval-tools.ts"
import { REPO } from "./helpers.ts"

const SERVE = NodePath.join(REPO, "test/fixtures/mcp/serve-approvals.ts")

const project = () =>
  Effect.acquireRelease(
    Effect.sync(() => {
      const root = NodeFs.realpathSync(NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "freecode-stdio-eras-")))
      NodeFs.writeFileSync(NodePath.join(root, "notes.txt"), "alpha\nbeta\n")
      return root
    }),
    (root) => Effect.sync(() => NodeFs.rmSync(root, { recursive: true, force: true }))
  )

const serverParams = (root: string) => ({
  command: process.execPath,
  args: [SERVE, "mcp", "--root", root],
  // The key that signs requestState lives in the state folder: the test's own.
  env: { ...(process.env as Record<string, string>), FREECODE_STATE_DIR: NodePath.join(root, ".state") },
  stderr: "pipe" as const
})

type Text = { type: string; text?: string }
const textOf = (result: unknown) =>
  (((result as { content?: unknown }).content ?? []) as Array<Text>).map((c) => c.text ?? "").join("\n")

const counted = (root: string) => {
  const file = NodePath.join(root, COUNT_LOG)
  return NodeFs.existsSync(file) ? NodeFs.readFileSync(file, "utf8") : ""
}

const waitFor = (what: () => boolean) =>
  Effect.gen(function* () {
    for (let i = 0; i < 400 && !what(); i++) yield* Effect.sleep("50 millis")
    return what()
  })

/** The form's first field picked as the person would: "Yes, this once". */
const approveOnce = { action: "accept" as const, content: { q1: "Yes, this once" } }

describe("mcp over stdio serves both eras", () => {
  it.live(
    "a 2026-07-28 client: discover, cached list, a call, an approval in-band, and a list change through listen",
    () =>
      Effect.gen(function* () {
        const root = yield* project()
        const client = new ModernClient(
          { name: "modern-stdio", version: "1.0.0" },
          { versionNegotiation: { mode: { pin: "2026-07-28" } }, capabilities: { elicitation: { form: {} } } }
        )
        const asked: Array<string> = []
        client.setRequestHandler("elicitation/create", async (request) => {
          asked.push((request.params as { message: string }).message)
          return approveOnce
        })
        yield* Effect.acquireRelease(
          Effect.promise(() => client.connect(new ModernStdio(serverParams(root)))),
          () => Effect.promise(() => client.close().catch(() => undefined))
        )
        expect(client.getNegotiatedProtocolVersion()).toBe("2026-07-28")
        expect(client.getServerVersion()?.name).toBe("freecode-tools")

        const listed = yield* Effect.promise(() => client.listTools())
        expect(listed.tools.map((t) => t.name).sort()).toEqual(["add_tool", "count", "ls", "read"])
        expect([(listed as { ttlMs?: number }).ttlMs, (listed as { cacheScope?: string }).cacheScope]).toEqual([
          60_000,
          "private"
        ])
        const read = yield* Effect.promise(() =>
          client.callTool({ name: "read", arguments: { filePath: "notes.txt" } })
        )
        expect(textOf(read)).toContain("beta")

        // The approval: input_required, answered by the client's elicitation handler, retried.
        const count = yield* Effect.promise(() => client.callTool({ name: "count", arguments: { n: 7 } }))
        expect(count.isError).not.toBe(true)
        expect(textOf(count)).toContain("counted 7")
        expect(asked).toHaveLength(1)
        expect(asked[0]).toContain("count")
        expect(counted(root)).toBe("7\n")

        // A list change reaches a listening 2026 client.
        let changed = 0
        client.setNotificationHandler("notifications/tools/list_changed", () => {
          changed++
        })
        const subscription = yield* Effect.promise(() => client.listen({ toolsListChanged: true }))
        expect(subscription.honoredFilter.toolsListChanged).toBe(true)
        const added = yield* Effect.promise(() => client.callTool({ name: "add_tool", arguments: {} }))
        expect(textOf(added)).toContain("registered late_")
        expect(yield* waitFor(() => changed > 0)).toBe(true)
        const relisted = yield* Effect.promise(() => client.listTools({}, { cacheMode: "bypass" } as never))
        expect(relisted.tools.map((t) => t.name).some((n) => n.startsWith("late_"))).toBe(true)
        yield* Effect.promise(() => subscription.close())
      }).pipe(Effect.scoped),
    180_000
  )

  it.live(
    "a 2025-11-25 client on the same command: initialize, elicitation for the approval, list_changed unsolicited",
    () =>
      Effect.gen(function* () {
        const root = yield* project()
        const client = new Client(
          { name: "legacy-stdio", version: "1.0.0" },
          { capabilities: { elicitation: { form: {} } } }
        )
        const asked: Array<string> = []
        client.setRequestHandler(ElicitRequestSchema, async (request) => {
          asked.push(request.params.message)
          return approveOnce
        })
        let changed = 0
        client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
          changed++
        })
        yield* Effect.acquireRelease(
          Effect.promise(() => client.connect(new StdioClientTransport(serverParams(root)))),
          () => Effect.promise(() => client.close().catch(() => undefined))
        )
        expect(client.getServerVersion()?.name).toBe("freecode-tools")
        const listed = yield* Effect.promise(() => client.listTools())
        expect(listed.tools.map((t) => t.name).sort()).toEqual(["add_tool", "count", "ls", "read"])
        const count = yield* Effect.promise(() => client.callTool({ name: "count", arguments: { n: 3 } }))
        expect(textOf(count)).toContain("counted 3")
        expect(asked).toHaveLength(1)
        expect(counted(root)).toBe("3\n")
        const before = changed
        yield* Effect.promise(() => client.callTool({ name: "add_tool", arguments: {} }))
        expect(yield* waitFor(() => changed > before)).toBe(true)
      }).pipe(Effect.scoped),
    180_000
  )

  it.live(
    "a 2026 client that cannot show a form: the call is refused naming what to do, and does not run",
    () =>
      Effect.gen(function* () {
        const root = yield* project()
        const client = new ModernClient(
          { name: "modern-no-forms", version: "1.0.0" },
          { versionNegotiation: { mode: { pin: "2026-07-28" } } }
        )
        yield* Effect.acquireRelease(
          Effect.promise(() => client.connect(new ModernStdio(serverParams(root)))),
          () => Effect.promise(() => client.close().catch(() => undefined))
        )
        const count = yield* Effect.promise(() => client.callTool({ name: "count", arguments: { n: 1 } }))
        expect(count.isError).toBe(true)
        expect(textOf(count)).toContain("the MCP client does not support elicitation")
        expect(counted(root)).toBe("")
      }).pipe(Effect.scoped),
    180_000
  )
})
