/**
 * A model's regex against the real MCP server over stdio: `(a+)+$` on long lines used to freeze
 * the process (a tools/list sent meanwhile got no answer; only SIGKILL stopped it).
 */
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { describe, expect, it } from "vitest"

const MAIN = NodePath.resolve(import.meta.dirname, "../../src/cli/main.ts")

const textOf = (result: object) =>
  (((result as { content?: unknown }).content ?? []) as Array<{ type: string; text?: string }>)
    .map((c) => c.text ?? "")
    .join("\n")

describe("a hostile regex through MCP", () => {
  it("output with (a+)+$ answers, and the server answers tools/list meanwhile", async () => {
    const root = NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "freecode-regex-"))
    // 40 lines of 1,900 a's and a '!': each line is 2^1900 steps for a backtracking engine.
    NodeFs.writeFileSync(NodePath.join(root, "a.txt"), `${"a".repeat(1900)}!\n`.repeat(40))
    const client = new Client({ name: "t", version: "1" })
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [MAIN, "mcp", "--root", root],
      env: { ...(process.env as Record<string, string>), FREECODE_OUTPUT_MAX_CHARS: "4000" },
      stderr: "pipe"
    })
    try {
      await client.connect(transport)
      const read = textOf(await client.callTool({ name: "read", arguments: { filePath: "a.txt" } }))
      const id = /output \{"id": "([^"]+)"/.exec(read)?.[1]
      expect(id).toBeDefined()
      const search = client.callTool({ name: "output", arguments: { id, pattern: "(a+)+$" } })
      const listed = client.listTools()
      const [found, tools] = await Promise.all([search, listed])
      expect(textOf(found)).toContain("No line matches /(a+)+$/.")
      expect(tools.tools.map((t) => t.name)).toContain("output")
      const refused = await client.callTool({ name: "output", arguments: { id, pattern: "(a)\\1" } })
      expect(refused.isError).toBe(true)
      expect(textOf(refused)).toContain("Backreferences")
    } finally {
      await client.close()
      NodeFs.rmSync(root, { recursive: true, force: true })
    }
  }, 60_000)
})
