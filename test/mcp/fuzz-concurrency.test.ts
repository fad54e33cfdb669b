/**
 * Fuzzed bash calls, four at a time, over MCP with the default policy (commands that are not
 * read-only ask, and this client cannot be asked): every call is answered, none waits on
 * another's question or on a lazy load that never ends.
 */
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import fc from "fast-check"
import { REPO } from "./helpers.ts"

const MAIN = NodePath.join(REPO, "src/cli/main.ts")

/** Shell-looking text: words, expansions, quotes, operators, and plain noise. */
const command = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc
    .array(
      fc.oneof(
        fc.constantFrom(
          "$" + "{HOME}",
          "$PWD",
          "$(echo hi)",
          "`id`",
          "'a b'",
          '"$x"',
          "~",
          "*",
          "?",
          "{a,b}",
          "$((1+2))"
        ),
        fc.constantFrom("|", "&&", "||", ";", ">", "<", "2>&1", "&", "(", ")", "\\", "#", "<<EOF"),
        fc.constantFrom("ls", "echo", "cat", "true", "printf", "test", "[", "git status", "env", "cd", "sleep 0"),
        fc.stringMatching(/^[\w./-]{1,12}$/)
      ),
      { minLength: 1, maxLength: 8 }
    )
    .map((parts) => parts.join(" "))
)

const BOUND_MS = 20_000

describe("fuzzed bash calls under concurrency over MCP", () => {
  it("300 calls, four at a time, with the default policy: every one is answered", { timeout: 240_000 }, async () => {
    const root = NodeFs.realpathSync(NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "freecode-mcp-fuzz-")))
    const commands = fc.sample(command, { numRuns: 300, seed: 26 })
    commands[7] = "$" + "{HOME}"
    const client = new Client({ name: "fuzz", version: "1.0.0" })
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [MAIN, "mcp", "--root", root],
      stderr: "pipe",
      env: { ...process.env, FREECODE_STATE_DIR: NodePath.join(root, ".state") } as Record<string, string>
    })
    const unanswered: Array<string> = []
    try {
      await client.connect(transport)
      let next = 0
      const worker = async () => {
        while (next < commands.length) {
          const cmd = commands[next++]!
          let timer: NodeJS.Timeout | undefined
          const answered = await Promise.race([
            client.callTool({ name: "bash", arguments: { command: cmd } }, undefined, { timeout: BOUND_MS * 3 }).then(
              () => true,
              () => true
            ),
            new Promise<boolean>((resolve) => {
              timer = setTimeout(() => resolve(false), BOUND_MS)
            })
          ])
          clearTimeout(timer)
          if (!answered) unanswered.push(cmd)
        }
      }
      await Promise.all([worker(), worker(), worker(), worker()])
    } finally {
      await client.close().catch(() => undefined)
      NodeFs.rmSync(root, { recursive: true, force: true })
    }
    expect(unanswered).toEqual([])
  })
})
