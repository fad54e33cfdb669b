/** `--session ID` across real CLI processes: a later process reads an earlier one's outputs. */
import { spawn } from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { afterAll, describe, expect, it } from "@effect/vitest"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { getDefaultEnvironment, StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { Effect } from "effect"
import { projectStateDir } from "../../src/session/location.ts"
import { makeStateDir } from "./helpers.ts"

const REPO = NodePath.resolve(import.meta.dirname, "../..")
const MAIN = NodePath.join(REPO, "src/cli/main.ts")
const state = makeStateDir()
const root = NodeFs.realpathSync(NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "freecode-session-cli-")))
afterAll(() => {
  state.cleanup()
  NodeFs.rmSync(root, { recursive: true, force: true })
})

interface Finished {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

const cli = (args: ReadonlyArray<string>, env: Record<string, string> = {}) =>
  Effect.promise(
    () =>
      new Promise<Finished>((resolve, reject) => {
        const child = spawn(process.execPath, [MAIN, ...args, "--root", root], {
          cwd: REPO,
          env: {
            ...process.env,
            NO_COLOR: "1",
            FREECODE_STATE_DIR: state.dir,
            FREECODE_OUTPUT_MAX_CHARS: "2000",
            ...env
          }
        })
        let stdout = ""
        let stderr = ""
        child.stdout.on("data", (b: Buffer) => (stdout += b.toString()))
        child.stderr.on("data", (b: Buffer) => (stderr += b.toString()))
        child.on("error", reject)
        child.on("close", (code) => resolve({ code, stdout, stderr }))
      })
  )

describe("--session across processes", () => {
  it.live(
    "a second process resumes the session and reads the first one's output with `output`",
    () =>
      Effect.gen(function* () {
        const first = yield* cli(["call", "bash", '{"command":"seq 1 5000"}', "--session", "s1", "--yes", "--json"])
        expect(first.code).toBe(0)
        const result = JSON.parse(first.stdout) as { outputId: string; modelOutput: string }
        expect(result.modelOutput).toContain("omitted")
        expect(result.modelOutput).not.toContain("\n2500\n")

        const second = yield* cli([
          "call",
          "output",
          JSON.stringify({ id: result.outputId, offset: 2500, limit: 2 }),
          "--session",
          "s1"
        ])
        expect(second.stderr).toBe("")
        expect(second.code).toBe(0)
        expect(second.stdout).toMatch(/2500\t2500\n\s*2501\t2501/)

        // Another session does not see it.
        const other = yield* cli(["call", "output", JSON.stringify({ id: result.outputId }), "--session", "s2"])
        expect(other.code).toBe(1)
        expect(other.stdout).toContain(`No stored output with id "${result.outputId}" in this session`)
      }),
    120_000
  )

  it.live(
    "an output that spilled to a file is read back by a regex in a later process",
    () =>
      Effect.gen(function* () {
        const env = { FREECODE_OUTPUT_STORE_BYTES: "4096" }
        const first = yield* cli(
          ["call", "bash", '{"command":"seq 1 20000"}', "--session", "spill", "--yes", "--json"],
          env
        )
        expect(first.code).toBe(0)
        const { outputId } = JSON.parse(first.stdout) as { outputId: string }
        const outputs = NodePath.join(projectStateDir(state.dir, root), "outputs")
        const files = NodeFs.readdirSync(outputs, { recursive: true }).filter((f) => String(f).endsWith(".out"))
        expect(files.length).toBeGreaterThan(0)
        const second = yield* cli(
          ["call", "output", JSON.stringify({ id: outputId, pattern: "^1999[0-9]$" }), "--session", "spill"],
          env
        )
        expect(second.code).toBe(0)
        expect(second.stdout).toContain("19995\t19995")
        expect(second.stdout).toContain("20000 lines")
      }),
    120_000
  )

  it.live(
    "without --session nothing is written to the state folder",
    () =>
      Effect.gen(function* () {
        const fresh = makeStateDir()
        const done = yield* cli(["call", "bash", '{"command":"echo hi"}', "--yes"], { FREECODE_STATE_DIR: fresh.dir })
        expect(done.code).toBe(0)
        expect(NodeFs.readdirSync(fresh.dir)).toEqual([])
        fresh.cleanup()
      }),
    120_000
  )

  it.live(
    "a corrupt session database is moved aside, the person told on stderr, and the call runs",
    () =>
      Effect.gen(function* () {
        const broken = makeStateDir()
        const dir = projectStateDir(broken.dir, root)
        NodeFs.mkdirSync(dir, { recursive: true })
        NodeFs.writeFileSync(NodePath.join(dir, "sessions.db"), "garbage ".repeat(1000))
        const done = yield* cli(["call", "bash", '{"command":"echo hi"}', "--session", "s", "--yes"], {
          FREECODE_STATE_DIR: broken.dir
        })
        expect(done.code).toBe(0)
        expect(done.stdout).toContain("hi")
        expect(done.stderr).toContain(NodePath.join(dir, "sessions.db"))
        expect(done.stderr).toContain("was damaged")
        expect(NodeFs.readdirSync(dir).some((f) => f.startsWith("sessions.db.damaged-"))).toBe(true)
        broken.cleanup()
      }),
    120_000
  )
})

describe("mcp --session across server processes", () => {
  const serve = async (session: string) => {
    const client = new Client({ name: "test", version: "1.0.0" })
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [MAIN, "mcp", "--root", root, "--session", session],
        env: {
          ...getDefaultEnvironment(),
          FREECODE_STATE_DIR: state.dir,
          FREECODE_OUTPUT_MAX_CHARS: "2000"
        },
        stderr: "pipe"
      })
    )
    return client
  }
  const text = (r: object) =>
    ((r as { content?: Array<{ text?: string }> }).content ?? []).map((c) => c.text ?? "").join("")

  it("a restarted server on the same session still has the earlier call's full output", async () => {
    NodeFs.writeFileSync(
      NodePath.join(root, "long.txt"),
      Array.from({ length: 3000 }, (_, i) => `row ${i + 1}`).join("\n")
    )
    const first = await serve("mcp-s1")
    let marker: string | undefined
    try {
      const cut = text(await first.callTool({ name: "read", arguments: { filePath: "long.txt" } }))
      marker = cut.match(/Retrieve them with output (\{"id": "[^"]+", "offset": \d+, "limit": \d+\})/)?.[1]
      expect(marker, cut.slice(0, 500)).toBeDefined()
    } finally {
      await first.close()
    }
    const second = await serve("mcp-s1")
    try {
      const rest = await second.callTool({ name: "output", arguments: JSON.parse(marker!) as Record<string, unknown> })
      expect(rest.isError).toBeUndefined()
      expect(text(rest)).toMatch(/row \d+/)
    } finally {
      await second.close()
    }
    // Another session does not see it.
    const other = await serve("mcp-s2")
    try {
      const miss = await other.callTool({ name: "output", arguments: JSON.parse(marker!) as Record<string, unknown> })
      expect(text(miss)).not.toMatch(/row \d+/)
    } finally {
      await other.close()
    }
  }, 120_000)
})
