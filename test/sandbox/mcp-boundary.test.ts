/**
 * The README's MCP setup in a fresh folder with no config: edits and sandboxed commands run,
 * what would still ask goes to the person through the client's elicitation (or is refused with
 * the rule to add), and deny rules hold. A real `freecode-tools mcp` process and the SDK's client.
 */
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { afterAll, describe, expect, it } from "@effect/vitest"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { getDefaultEnvironment, StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { ElicitRequestSchema, type ElicitResult } from "@modelcontextprotocol/sdk/types.js"
import { Effect } from "effect"
import { probeSandbox } from "../../src/sandbox/availability.ts"

const MAIN = NodePath.resolve(import.meta.dirname, "../../src/cli/main.ts")
const runnable = (await probeSandbox()).available || process.env.CI !== undefined

const outsideBase = NodeFs.existsSync("/var/tmp") ? "/var/tmp" : NodeOs.tmpdir()
const made: Array<string> = []
afterAll(() => {
  for (const dir of made) NodeFs.rmSync(dir, { recursive: true, force: true })
})
const folder = (files: Record<string, string> = {}, base = NodeOs.tmpdir()) => {
  const root = NodeFs.realpathSync(NodeFs.mkdtempSync(NodePath.join(base, "freecode-mcp-boundary-")))
  made.push(root)
  for (const [name, text] of Object.entries(files)) NodeFs.writeFileSync(NodePath.join(root, name), text)
  return root
}

interface Connected {
  readonly call: (name: string, args: Record<string, unknown>) => Promise<{ text: string; isError: boolean }>
  readonly stderr: () => string
  readonly close: () => Promise<void>
}

/** `mcp --root ROOT` with a client that answers elicitations with `answer` (or lacks the capability). */
const connect = async (
  root: string,
  answer?: (params: unknown) => ElicitResult,
  env: Record<string, string> = {}
): Promise<Connected> => {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [MAIN, "mcp", "--root", root],
    env: { ...getDefaultEnvironment(), PATH: process.env.PATH ?? "", ...env },
    stderr: "pipe"
  })
  let stderr = ""
  transport.stderr?.on("data", (b: Buffer) => (stderr += b.toString()))
  const client = new Client(
    { name: "boundary-test", version: "0" },
    { capabilities: answer === undefined ? {} : { elicitation: { form: {} } } }
  )
  if (answer !== undefined) client.setRequestHandler(ElicitRequestSchema, async (r) => answer(r.params))
  await client.connect(transport)
  return {
    call: async (name, args) => {
      const r = await client.callTool({ name, arguments: args })
      const content = r.content as Array<{ type: string; text?: string }>
      return { text: content.map((c) => c.text ?? "").join(""), isError: r.isError === true }
    },
    stderr: () => stderr,
    close: () => client.close()
  }
}

describe.skipIf(!runnable)("mcp with no config file", () => {
  it.live("edits inside the root and sandboxed commands run; a write outside is refused naming the rule", () =>
    Effect.promise(async () => {
      const root = folder({ "a.txt": "one\n" })
      // Not under /tmp, which the sandbox replaces by its own: there a write would fail for a
      // missing folder, not for the boundary.
      const outside = folder({}, outsideBase)
      const mcp = await connect(root)
      try {
        const edit = await mcp.call("edit", {
          filePath: NodePath.join(root, "a.txt"),
          oldString: "one",
          newString: "two"
        })
        // edit wants a read first; read, then edit.
        if (edit.isError) {
          await mcp.call("read", { filePath: NodePath.join(root, "a.txt") })
          const again = await mcp.call("edit", {
            filePath: NodePath.join(root, "a.txt"),
            oldString: "one",
            newString: "two"
          })
          expect(again.isError, again.text).toBe(false)
        }
        expect(NodeFs.readFileSync(NodePath.join(root, "a.txt"), "utf8")).toBe("two\n")
        const write = await mcp.call("write", { filePath: NodePath.join(root, "b.txt"), content: "new\n" })
        expect(write.isError, write.text).toBe(false)
        const bash = await mcp.call("bash", { command: "echo hello && touch made-by-bash" })
        expect(bash.isError, bash.text).toBe(false)
        expect(bash.text).toContain("hello")
        expect(NodeFs.existsSync(NodePath.join(root, "made-by-bash"))).toBe(true)
        const escaping = await mcp.call("bash", { command: `touch ${outside}/escaped` })
        // bubblewrap's read-only mount, or Seatbelt's refusal on macOS.
        expect(escaping.text).toMatch(/Read-only file system|Operation not permitted/)
        expect(NodeFs.existsSync(NodePath.join(outside, "escaped"))).toBe(false)
        const away = await mcp.call("write", { filePath: NodePath.join(outside, "c.txt"), content: "x\n" })
        expect(away.isError).toBe(true)
        expect(away.text).toContain("No one is available to approve it here")
        expect(NodeFs.existsSync(NodePath.join(outside, "c.txt"))).toBe(false)
        expect(mcp.stderr()).toMatch(/sandbox: on/)
      } finally {
        await mcp.close()
      }
    })
  )

  it.live("what asks goes to the person through elicitation: yes runs it, no refuses it", () =>
    Effect.promise(async () => {
      const root = folder()
      // Not under /tmp, which the sandbox replaces by its own: there a write would fail for a
      // missing folder, not for the boundary.
      const outside = folder({}, outsideBase)
      const asked: Array<unknown> = []
      let yes = true
      const mcp = await connect(root, (params) => {
        asked.push(params)
        return { action: "accept", content: { q1: yes ? "Yes, this once" : "No" } }
      })
      try {
        const out = await mcp.call("bash", { command: `touch ${outside}/approved`, dangerouslyDisableSandbox: true })
        expect(out.isError, out.text).toBe(false)
        expect(NodeFs.existsSync(NodePath.join(outside, "approved"))).toBe(true)
        expect(JSON.stringify(asked[0])).toContain("approved")
        yes = false
        const refused = await mcp.call("write", { filePath: NodePath.join(outside, "d.txt"), content: "x\n" })
        expect(refused.isError).toBe(true)
        expect(NodeFs.existsSync(NodePath.join(outside, "d.txt"))).toBe(false)
        expect(asked).toHaveLength(2)
      } finally {
        await mcp.close()
      }
    })
  )

  it.live("a control path a command makes is moved aside, and the result names it", () =>
    Effect.promise(async () => {
      const root = folder({ "a.txt": "a\n" })
      const state = folder({}, outsideBase)
      const mcp = await connect(root, undefined, { FREECODE_STATE_DIR: state })
      try {
        const r = await mcp.call("bash", {
          command: "mkdir sub && git init -q sub && echo x > sub/.git/hooks/pre-commit && echo made"
        })
        expect(r.isError, r.text).toBe(false)
        expect(r.text).toContain("made")
        expect(r.text).toContain("moved sub/.git aside")
        expect(NodeFs.existsSync(NodePath.join(root, "sub", ".git"))).toBe(false)
        expect(NodeFs.existsSync(NodePath.join(root, "sub"))).toBe(true)
        expect(NodeFs.readdirSync(NodePath.join(state, "quarantine"))).toHaveLength(1)
      } finally {
        await mcp.close()
      }
    })
  )

  it.live("a deny rule holds inside the sandbox too", () =>
    Effect.promise(async () => {
      const root = folder({ "freecode.json": JSON.stringify({ permissions: { deny: ["Bash(touch:*)"] } }) })
      const mcp = await connect(root, () => ({ action: "accept", content: { q1: "Yes, this once" } }))
      try {
        const r = await mcp.call("bash", { command: "touch denied" })
        expect(r.isError).toBe(true)
        expect(r.text).toContain("Bash(touch:*)")
        expect(NodeFs.existsSync(NodePath.join(root, "denied"))).toBe(false)
      } finally {
        await mcp.close()
      }
    })
  )
})
