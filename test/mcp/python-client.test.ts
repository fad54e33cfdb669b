/**
 * The Python MCP SDK (`mcp` 2.x, python-sdk.ts) as a client of the real `mcp` command, in both
 * eras, over stdio and over HTTP with the token: it lists the tools, reads a file, and answers an
 * approval with its elicitation callback (an elicitation request in 2025-11-25; in 2026-07-28
 * `input_required` and a retry, which the SDK drives itself). The approved tool runs once.
 */
import { type ChildProcess, execFile, spawn } from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { COUNT_LOG } from "../fixtures/mcp/approval-tools.ts"
import { REPO } from "./helpers.ts"
import { pythonAvailable, pythonWithMcp } from "./python-sdk.ts"

const SERVE = NodePath.join(REPO, "test/fixtures/mcp/serve-approvals.ts")
const CLIENT = NodePath.join(REPO, "test/fixtures/mcp/python-client.py")

const root = NodeFs.realpathSync(NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "freecode-python-client-")))
NodeFs.writeFileSync(NodePath.join(root, "notes.txt"), "alpha\nbeta\n")
// The key that signs 2026-era request states lives in the state folder: the test's own.
const env = { ...process.env, FREECODE_STATE_DIR: NodePath.join(root, ".state") }

interface Outcome {
  readonly protocolVersion: string
  readonly tools: ReadonlyArray<string>
  readonly read: string
  readonly count: string
  readonly countIsError: boolean
  readonly asked: ReadonlyArray<string>
}

let python = ""
const runClient = (args: ReadonlyArray<string>, extraEnv: Record<string, string> = {}) =>
  new Promise<{ outcome?: Outcome; stderr: string }>((resolve) => {
    execFile(
      python,
      [CLIENT, ...args],
      { env: { ...env, ...extraEnv }, timeout: 150_000, maxBuffer: 10 * 1024 * 1024 },
      (_error, stdout, stderr) => {
        const line = stdout.trim().split("\n").pop() ?? ""
        resolve(line.startsWith("{") ? { outcome: JSON.parse(line) as Outcome, stderr } : { stderr })
      }
    )
  })

const countLog = () => {
  const file = NodePath.join(root, COUNT_LOG)
  const text = NodeFs.existsSync(file) ? NodeFs.readFileSync(file, "utf8") : ""
  NodeFs.rmSync(file, { force: true })
  return text
}

const expectServed = (outcome: Outcome | undefined, era: string, n: string) => {
  expect(outcome?.protocolVersion).toBe(era)
  expect(outcome?.tools).toEqual(["add_tool", "count", "ls", "read"])
  expect(outcome?.read).toContain("2\tbeta")
  // The person was asked once, said yes once, and the tool ran once.
  expect([outcome?.count, outcome?.countIsError]).toEqual(["counted 5", false])
  expect(outcome?.asked).toHaveLength(1)
  expect(outcome?.asked[0]).toContain("count")
  expect(countLog()).toBe(`${n}\n`)
}

let server: ChildProcess | undefined
let url = ""
let token = ""

describe.skipIf(!pythonAvailable())("the Python MCP SDK as a client", () => {
  beforeAll(async () => {
    python = pythonWithMcp()
    server = spawn(process.execPath, [SERVE, "mcp", "--root", root, "--http", "0"], {
      env,
      stdio: ["ignore", "ignore", "pipe"]
    })
    const started = server
    ;[url, token] = await new Promise<[string, string]>((resolve, reject) => {
      let err = ""
      started.stderr?.on("data", (b: Buffer) => {
        err += b.toString()
        const at = err.match(/at (http:\/\/\S+\/mcp);/)?.[1]
        const given = err.match(/token=(\S+)/)?.[1]
        if (at !== undefined && given !== undefined) resolve([at, given])
      })
      started.on("exit", (code) => reject(new Error(`mcp --http exited ${code}: ${err}`)))
    })
  }, 400_000)

  afterAll(() => {
    server?.kill("SIGTERM")
    NodeFs.rmSync(root, { recursive: true, force: true })
  })

  const command = [process.execPath, SERVE, "mcp", "--root", root]

  it("over stdio, pinned to 2026-07-28: no handshake, the approval through input_required", async () => {
    const { outcome, stderr } = await runClient(["stdio", "2026-07-28", ...command])
    expect(outcome, stderr).toBeDefined()
    expectServed(outcome, "2026-07-28", "5")
  }, 180_000)

  it("over stdio, the 2025 way (initialize): the approval through an elicitation request", async () => {
    const { outcome, stderr } = await runClient(["stdio", "legacy", ...command])
    expect(outcome, stderr).toBeDefined()
    expectServed(outcome, "2025-11-25", "5")
  }, 180_000)

  it("over HTTP with the token, pinned to 2026-07-28, then the 2025 way, then negotiated", async () => {
    const withToken = { FREECODE_MCP_TOKEN: token }
    const modern = await runClient(["http", "2026-07-28", url], withToken)
    expect(modern.outcome, modern.stderr).toBeDefined()
    expectServed(modern.outcome, "2026-07-28", "5")
    const legacy = await runClient(["http", "legacy", url], withToken)
    expect(legacy.outcome, legacy.stderr).toBeDefined()
    expectServed(legacy.outcome, "2025-11-25", "5")
    // The SDK's own choice: server/discover is answered, so the 2026 revision.
    const auto = await runClient(["http", "auto", url], withToken)
    expect(auto.outcome, auto.stderr).toBeDefined()
    expectServed(auto.outcome, "2026-07-28", "5")
  }, 400_000)

  it("over HTTP with a wrong token: refused, saying which token to send; nothing runs", async () => {
    const { outcome, stderr } = await runClient(["http", "auto", url], {
      FREECODE_MCP_TOKEN: "not-the-token-at-all"
    })
    expect(outcome).toBeUndefined()
    expect(stderr).toContain("the bearer token is not this server's")
    expect(countLog()).toBe("")
  }, 180_000)
})
