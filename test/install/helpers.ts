/** Shell steps for the install tests: a command in a folder with a given PATH, its output kept. */
import { spawn } from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"

export const REPO = NodePath.resolve(import.meta.dirname, "../..")

/**
 * The install tests run when FREECODE_INSTALL_TESTS is set (CI's .ci/run sets it): they clone,
 * `npm ci`, pack and install, minutes of work. "quick" leaves out the clone's `npm run check`
 * (the whole suite again), for a run of this file alone.
 */
export const INSTALL_TESTS = process.env.FREECODE_INSTALL_TESTS ?? ""

/**
 * The PATH a new user has: the machine's, before npm put this project's Node 24 first. CI passes
 * it as FREECODE_MACHINE_PATH; otherwise PATH without node_modules/.bin folders.
 */
export const machinePath = (): string =>
  process.env.FREECODE_MACHINE_PATH ??
  (process.env.PATH ?? "")
    .split(NodePath.delimiter)
    .filter(
      (dir) => !dir.includes(`node_modules${NodePath.sep}.bin`) && !dir.includes(`${NodePath.sep}.node${NodePath.sep}`)
    )
    .join(NodePath.delimiter)

/** The environment of a fresh shell: the machine's PATH, no npm or test variables of ours. */
export const freshEnv = (path: string): NodeJS.ProcessEnv => {
  const env: NodeJS.ProcessEnv = {}
  for (const [k, v] of Object.entries(process.env)) {
    if (k.startsWith("npm_") || k.startsWith("VITEST") || k === "FREECODE_INSTALL_TESTS" || k === "NODE_OPTIONS")
      continue
    env[k] = v
  }
  return { ...env, PATH: path, NO_COLOR: "1" }
}

export interface Ran {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

/** Runs `command` with bash in `cwd`; `input` goes to stdin. Never rejects: the code says. */
export const sh = (command: string, cwd: string, env: NodeJS.ProcessEnv, input = "", timeoutMs = 600_000) =>
  new Promise<Ran>((resolve) => {
    const child = spawn("bash", ["-c", command], { cwd, env, stdio: ["pipe", "pipe", "pipe"] })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (b: Buffer) => (stdout += b.toString()))
    child.stderr.on("data", (b: Buffer) => (stderr += b.toString()))
    const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs)
    child.on("close", (code) => {
      clearTimeout(timer)
      resolve({ code, stdout, stderr })
    })
    child.stdin.end(input)
  })

export const tempDir = (name: string) => NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), `freecode-${name}-`))

/** JSON-RPC lines a client sends first: initialize, initialized, tools/list. */
export const MCP_HELLO = [
  {
    jsonrpc: "2.0",
    id: 1,
    method: "initialize",
    params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "install-test", version: "1" } }
  },
  { jsonrpc: "2.0", method: "notifications/initialized" },
  { jsonrpc: "2.0", id: 2, method: "tools/list" }
]
  .map((m) => `${JSON.stringify(m)}\n`)
  .join("")

/** The tool names of the tools/list answer in a stdio transcript. */
export const listedTools = (stdout: string): ReadonlyArray<string> => {
  for (const line of stdout.split("\n")) {
    let message: { id?: number; result?: { tools?: ReadonlyArray<{ name: string }> } }
    try {
      message = JSON.parse(line)
    } catch {
      continue // a partial line, or not protocol
    }
    if (message.id === 2) return (message.result?.tools ?? []).map((t) => t.name)
  }
  return []
}

/**
 * Starts an MCP server with `command`, sends initialize and tools/list, and closes stdin once the
 * list has come (or after `timeoutMs`): what a client does first. Resolves when the server exits.
 */
export const mcpHello = (command: string, cwd: string, env: NodeJS.ProcessEnv, timeoutMs = 600_000) =>
  new Promise<Ran & { readonly tools: ReadonlyArray<string> }>((resolve) => {
    const child = spawn("bash", ["-c", command], { cwd, env, stdio: ["pipe", "pipe", "pipe"] })
    let stdout = ""
    let stderr = ""
    const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs)
    child.stdout.on("data", (b: Buffer) => {
      stdout += b.toString()
      if (listedTools(stdout).length > 0) child.stdin.end()
    })
    child.stderr.on("data", (b: Buffer) => (stderr += b.toString()))
    child.on("close", (code) => {
      clearTimeout(timer)
      resolve({ code, stdout, stderr, tools: listedTools(stdout) })
    })
    child.stdin.write(MCP_HELLO)
  })
