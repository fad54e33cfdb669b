/**
 * A server's question relayed through our own serving: `freecode-tools mcp` (the real command,
 * over stdio) has the asking fixture (test/fixtures/mcp/asking-server.ts) configured as an
 * upstream server, and a real client of each era calls its `order` tool through us. A 2025-era
 * client (SDK 1.32) is asked with elicitation in the middle of the call; a 2026-era client
 * (SDK 2.x) gets an `input_required` of ours, and its retry resumes our held call, which
 * answers the upstream server: the order is written once. The approval for the call comes the
 * same way first.
 */
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Client as ModernClient } from "@modelcontextprotocol/client"
import { StdioClientTransport as ModernStdio } from "@modelcontextprotocol/client/stdio"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js"
import { Effect } from "effect"
import { makeProject, REPO } from "../cli/helpers.ts"

const MAIN = NodePath.join(REPO, "src/cli/main.ts")
const ASKING = NodePath.join(REPO, "test/fixtures/mcp/asking-server.ts")

interface Asked {
  readonly message: string
  readonly fields: ReadonlyArray<string>
}

/** The person at the client: yes to the approvals, 3 to the order's question, goes to a URL; what was asked. */
const answer = (
  asked: Array<Asked>,
  params: { message: string; mode?: string; url?: string; requestedSchema?: { properties?: object } }
) => {
  const fields = params.mode === "url" ? [`url ${params.url}`] : Object.keys(params.requestedSchema?.properties ?? {})
  asked.push({ message: params.message, fields })
  if (params.mode === "url") return { action: "accept" as const }
  return fields.includes("q1")
    ? { action: "accept" as const, content: { q1: "Yes, this once" } }
    : { action: "accept" as const, content: { quantity: 3 } }
}

const project = () => {
  const made = makeProject()
  const effects = NodePath.join(made.root, "effects.log")
  NodeFs.writeFileSync(
    NodePath.join(made.root, ".mcp.json"),
    JSON.stringify({
      mcpServers: {
        shop: { command: process.execPath, args: [ASKING, "--effects", effects], startupTimeout: 120_000 }
      }
    })
  )
  return { ...made, effects }
}

const serving = (root: string) => ({
  command: process.execPath,
  args: [MAIN, "mcp", "--root", root, "--trust"],
  stderr: "pipe" as const
})

/** Waits until our server lists the upstream tool (upstream servers connect in the background). */
const untilListed = async (list: () => Promise<{ tools: Array<{ name: string }> }>) => {
  for (let i = 0; i < 600; i++) {
    if ((await list()).tools.some((t) => t.name === "mcp__shop__order")) return
    await new Promise((r) => setTimeout(r, 100))
  }
  throw new Error("mcp__shop__order never listed")
}

const textOf = (result: unknown) => (result as { content: Array<{ text: string }> }).content[0]!.text

describe("an upstream server's question through freecode-tools mcp", () => {
  it.live(
    "a 2025-era client is asked with elicitation mid-call; the order runs once",
    () =>
      Effect.gen(function* () {
        const p = project()
        yield* Effect.addFinalizer(() => Effect.sync(p.cleanup))
        const asked: Array<Asked> = []
        const client = new Client(
          { name: "old", version: "1.0.0" },
          { capabilities: { elicitation: { form: {}, url: {} } } }
        )
        client.setRequestHandler(ElicitRequestSchema, async (request) =>
          answer(asked, request.params as Parameters<typeof answer>[1])
        )
        yield* Effect.acquireRelease(
          Effect.promise(() => client.connect(new StdioClientTransport(serving(p.root)))),
          () => Effect.promise(() => client.close())
        )
        yield* Effect.promise(() => untilListed(() => client.listTools()))
        const result = yield* Effect.promise(() =>
          client.callTool({ name: "mcp__shop__order", arguments: { item: "apple" } }, undefined, { timeout: 120_000 })
        )
        expect(textOf(result)).toBe('ordered 3 apple {"quantity":3,"gift":false}')
        expect(asked.map((a) => a.fields[0])).toEqual(["q1", "quantity"])
        expect(asked.map((a) => a.message).at(-1)).toBe("How many apple?")
        expect(NodeFs.readFileSync(p.effects, "utf8").trim().split("\n")).toHaveLength(1)
        // A URL question: passed on by elicitation in URL mode.
        const visit = yield* Effect.promise(() =>
          client.callTool({ name: "mcp__shop__visit", arguments: {} }, undefined, { timeout: 120_000 })
        )
        expect(textOf(visit)).toBe("visit accept")
        expect(asked.at(-1)?.fields).toEqual(["url https://shop.example/login"])
      }).pipe(Effect.scoped),
    180_000
  )

  it.live(
    "a 2026-era client gets input_required from us, retries, and the held call answers the upstream; the order runs once",
    () =>
      Effect.gen(function* () {
        const p = project()
        yield* Effect.addFinalizer(() => Effect.sync(p.cleanup))
        const asked: Array<Asked> = []
        const client = new ModernClient(
          { name: "new", version: "1.0.0" },
          { capabilities: { elicitation: { form: {}, url: {} } }, versionNegotiation: { mode: { pin: "2026-07-28" } } }
        )
        client.setRequestHandler("elicitation/create", async (request) =>
          answer(asked, request.params as Parameters<typeof answer>[1])
        )
        yield* Effect.acquireRelease(
          Effect.promise(() => client.connect(new ModernStdio(serving(p.root)))),
          () => Effect.promise(() => client.close())
        )
        expect(client.getNegotiatedProtocolVersion()).toBe("2026-07-28")
        // Read afresh each time: the SDK keeps a list for as long as its cache hint says.
        yield* Effect.promise(() => untilListed(() => client.listTools(undefined, { cacheMode: "refresh" })))
        const result = yield* Effect.promise(() =>
          client.callTool({ name: "mcp__shop__order", arguments: { item: "pear" } }, { timeout: 120_000 })
        )
        expect(textOf(result)).toBe('ordered 3 pear {"quantity":3,"gift":false}')
        // The approval first (before the tool starts), then the upstream's question (held).
        expect(asked.map((a) => a.fields[0])).toEqual(["q1", "quantity"])
        expect(asked.map((a) => a.message).at(-1)).toBe("How many pear?")
        expect(NodeFs.readFileSync(p.effects, "utf8").trim().split("\n")).toHaveLength(1)
        // A URL question: in URL mode in our input_required.
        const visit = yield* Effect.promise(() =>
          client.callTool({ name: "mcp__shop__visit", arguments: {} }, { timeout: 120_000 })
        )
        expect(textOf(visit)).toBe("visit accept")
        expect(asked.at(-1)?.fields).toEqual(["url https://shop.example/login"])
      }).pipe(Effect.scoped),
    180_000
  )
})
