import { spawn } from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { PassThrough } from "node:stream"
import { type JSONRPCMessage, JSONRPCMessageSchema } from "@modelcontextprotocol/sdk/types.js"
import { describe, expect, it } from "vitest"
import { LineStdioTransport } from "../../src/mcp/stdio-transport.ts"
import { REPO } from "./helpers.ts"

const tick = () => new Promise((resolve) => setImmediate(resolve))

describe("the stdio server transport", () => {
  it("skips a line over the limit to its newline, answers its id with an error, reports it, and reads on", async () => {
    const stdin = new PassThrough()
    const stdout = new PassThrough()
    const reports: Array<string> = []
    const transport = new LineStdioTransport({
      stdin,
      stdout,
      report: (l) => reports.push(l),
      maxBytes: 200,
      check: (v) => JSONRPCMessageSchema.parse(v)
    })
    const got: Array<JSONRPCMessage> = []
    transport.onmessage = (m) => got.push(m)
    await transport.start()
    const written: Array<string> = []
    stdout.on("data", (d: Buffer) => written.push(d.toString()))

    const big = JSON.stringify({
      jsonrpc: "2.0",
      id: 7,
      method: "tools/call",
      params: { arguments: { x: "y".repeat(500) } }
    })
    // In pieces, the newline in the middle of a chunk with the next message after it.
    stdin.write(big.slice(0, 150))
    stdin.write(big.slice(150, 400))
    stdin.write(`${big.slice(400)}\n{"jsonrpc":"2.0","id":8,"method":"ping"}\nnot json\n`)
    stdin.write('{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
    await tick()

    expect(got).toEqual([
      { jsonrpc: "2.0", id: 8, method: "ping" },
      { jsonrpc: "2.0", method: "notifications/initialized" }
    ])
    const answer = JSON.parse(written.join("").trim()) as { id: number; error: { code: number; message: string } }
    expect(answer.id).toBe(7)
    expect(answer.error.code).toBe(-32600)
    expect(answer.error.message).toContain(`The message was ${big.length} bytes`)
    expect(reports[0]).toContain(`skipped a message of ${big.length} bytes`)
    expect(reports[1]).toContain("not a JSON-RPC message")
    await transport.close()
  })

  it("`freecode-tools mcp` stays up after a message over 10 MiB, answers it with an error and says so on stderr", async () => {
    const root = NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "freecode-mcp-big-"))
    const child = spawn(process.execPath, [NodePath.join(REPO, "src/cli/main.ts"), "mcp", "--root", root], {
      stdio: ["pipe", "pipe", "pipe"]
    })
    try {
      let out = ""
      let err = ""
      child.stderr.on("data", (d: Buffer) => (err += d.toString()))
      const answers = new Map<number, Record<string, unknown>>()
      const waiting = new Map<number, () => void>()
      child.stdout.on("data", (d: Buffer) => {
        out += d.toString()
        const lines = out.split("\n")
        out = lines.pop() ?? ""
        for (const line of lines) {
          const m = JSON.parse(line) as { id?: number }
          if (typeof m.id === "number") {
            answers.set(m.id, m)
            waiting.get(m.id)?.()
          }
        }
      })
      const answer = (id: number) =>
        new Promise<Record<string, unknown>>((resolve) => {
          if (answers.has(id)) return resolve(answers.get(id)!)
          waiting.set(id, () => resolve(answers.get(id)!))
        })
      const send = (m: unknown) => child.stdin.write(`${JSON.stringify(m)}\n`)
      send({
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } }
      })
      await answer(1)
      send({ jsonrpc: "2.0", method: "notifications/initialized" })
      const content = "x".repeat(11 * 1024 * 1024)
      send({
        jsonrpc: "2.0",
        id: 2,
        method: "tools/call",
        params: { name: "write", arguments: { filePath: "a", content } }
      })
      send({ jsonrpc: "2.0", id: 3, method: "tools/list" })
      const refused = (await answer(2)) as { error: { code: number; message: string } }
      expect(refused.error.code).toBe(-32600)
      expect(refused.error.message).toContain("one message may be at most 10 MiB")
      const listed = (await answer(3)) as { result: { tools: Array<unknown> } }
      expect(listed.result.tools.length).toBeGreaterThan(3)
      expect(err).toContain("skipped a message of")
      expect(child.exitCode).toBe(null)
    } finally {
      child.kill("SIGKILL")
      NodeFs.rmSync(root, { recursive: true, force: true })
    }
  }, 120_000)
})
