/**
 * `freecode-tools mcp` over stdio as a client meets it: one line on stderr says it is serving,
 * and read de-duplication is off unless FREECODE_READ_DEDUP=1 (the server cannot know what the
 * client pruned); when on, the pointer names the earlier call.
 */
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { afterAll, describe, expect, it } from "vitest"
import { DEDUP_POINTER } from "../../src/read-state/read-state.ts"
import { REPO } from "./helpers.ts"

const MAIN = NodePath.join(REPO, "src/cli/main.ts")
const root = NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "freecode-mcp-first-"))
NodeFs.writeFileSync(NodePath.join(root, "a.txt"), "alpha\nbeta\n")
afterAll(() => NodeFs.rmSync(root, { recursive: true, force: true }))

const textOf = (result: unknown) =>
  ((result as { content: ReadonlyArray<{ type: string; text?: string }> }).content[0]?.text ?? "") as string

const serve = async (env: Record<string, string>) => {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [MAIN, "mcp", "--root", root],
    env: { ...(process.env as Record<string, string>), ...env },
    stderr: "pipe"
  })
  let stderr = ""
  transport.stderr?.on("data", (b: Buffer) => (stderr += b.toString()))
  const client = new Client({ name: "first-run", version: "1.0.0" })
  await client.connect(transport)
  return { client, stderr: () => stderr }
}

describe("mcp over stdio, first run", () => {
  it("says on stderr that it is serving; re-reads get the content; tools/list counts what it said", async () => {
    const { client, stderr } = await serve({})
    try {
      const listed = await client.listTools()
      const first = await client.callTool({ name: "read", arguments: { filePath: "a.txt" } })
      const again = await client.callTool({ name: "read", arguments: { filePath: "a.txt" } })
      expect(textOf(first)).toContain("1\talpha")
      expect(textOf(again)).toBe(textOf(first))
      expect(stderr()).toMatch(
        new RegExp(
          `^freecode-tools mcp: serving ${listed.tools.length} tools for ${root} over stdio; sandbox: [^\\n]*\\n$`
        )
      )
    } finally {
      await client.close()
    }
  }, 60_000)

  it("FREECODE_READ_DEDUP=1: an identical re-read names the earlier call", async () => {
    const { client } = await serve({ FREECODE_READ_DEDUP: "1" })
    try {
      await client.callTool({ name: "read", arguments: { filePath: "a.txt" } })
      const again = textOf(await client.callTool({ name: "read", arguments: { filePath: "a.txt" } }))
      expect(again).toContain(DEDUP_POINTER)
      expect(again).toMatch(/\(call mcp_\w+\)/)
    } finally {
      await client.close()
    }
  }, 60_000)
})
