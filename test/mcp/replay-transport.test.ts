/**
 * The stdio opening (stdio-eras.ts): the first line's JSON picks the era whose SDK checks it,
 * asynchronously (the check is loaded then). Lines that come while it loads must neither be lost
 * nor reordered; a first line that fails its check is skipped and the next one decides.
 */
import { PassThrough } from "node:stream"
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js"
import { describe, expect, it } from "vitest"
import { checkOfEra, ReplayTransport } from "../../src/mcp/stdio-eras.ts"
import { LineStdioTransport } from "../../src/mcp/stdio-transport.ts"

const line = (m: unknown) => `${JSON.stringify(m)}\n`
const ENVELOPE = {
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientInfo": { name: "t", version: "1" },
  "io.modelcontextprotocol/clientCapabilities": {}
}
const INITIALIZE = {
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "t", version: "1" } }
}

const opened = (checkFor?: Parameters<typeof ReplayTransport.open>[1]) => {
  const stdin = new PassThrough()
  const reports: Array<string> = []
  const inner = new LineStdioTransport({ stdin, stdout: new PassThrough(), report: (l) => reports.push(l) })
  const opening = ReplayTransport.open(inner, checkFor)
  return { stdin, reports, opening, inner }
}

/** Everything the connected side receives, in order, until `count` messages arrived. */
const received = async (transport: ReplayTransport, count: number) => {
  const got: Array<JSONRPCMessage> = []
  const done = new Promise<void>((resolve) => {
    transport.onmessage = (m) => {
      got.push(m)
      if (got.length === count) resolve()
    }
  })
  await transport.start()
  await done
  return got
}

describe("the stdio opening", () => {
  it("keeps the lines read while the era's check loads, in order, and checks them with it", async () => {
    const seen: Array<unknown> = []
    let release = () => {}
    const loaded = new Promise<void>((resolve) => (release = resolve))
    const { stdin, reports, opening } = opened(async (first) => {
      seen.push(first)
      await loaded
      return checkOfEra(first)
    })
    stdin.write(line({ jsonrpc: "2.0", id: 1, method: "server/discover", params: { _meta: ENVELOPE } }))
    stdin.write(line({ jsonrpc: "2.0", id: 2, method: "tools/list", params: { _meta: ENVELOPE } }))
    // Not JSON-RPC (no jsonrpc member): checked once the era is known, reported and skipped.
    stdin.write(line({ id: 3, method: "tools/list" }))
    stdin.write(line({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 2 } }))
    await new Promise((resolve) => setImmediate(resolve))
    release()
    const { transport, first } = await opening
    expect(first).toMatchObject({ id: 1, method: "server/discover" })
    expect(seen).toHaveLength(1)
    stdin.write(line({ jsonrpc: "2.0", id: 4, method: "ping", params: { _meta: ENVELOPE } }))
    const got = await received(transport, 4)
    expect(got.map((m) => ("id" in m ? m.id : "method" in m ? m.method : undefined))).toEqual([
      1,
      2,
      "notifications/cancelled",
      4
    ])
    expect(reports).toHaveLength(1)
    expect(reports[0]).toContain("not a JSON-RPC message")
  })

  it("a first line that fails its era's check is skipped; the next decides, with its own era's check", async () => {
    const { stdin, reports, opening } = opened()
    // A handshake by its method, but its params are not an object: SDK 1.32's schema refuses it.
    stdin.write("not json\n")
    stdin.write(line({ jsonrpc: "2.0", id: 1, method: "initialize", params: "nope" }))
    stdin.write(line(INITIALIZE))
    const { transport, first } = await opening
    expect(first).toMatchObject({ id: 1, method: "initialize" })
    expect(reports).toHaveLength(2)
    const got = await received(transport, 1)
    expect(got).toEqual([INITIALIZE])
  })

  it("input that ends with no message that passes opens nothing", async () => {
    const { stdin, reports, opening, inner } = opened()
    stdin.write(line({ jsonrpc: "1.0", id: 1, method: "ping" }))
    await new Promise((resolve) => setImmediate(resolve))
    // What serve.ts does when stdin ends.
    await inner.close()
    const { first } = await opening
    expect(first).toBeUndefined()
    expect(reports).toHaveLength(1)
  })
})
