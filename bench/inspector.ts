/**
 * The MCP Inspector (`@modelcontextprotocol/inspector`, its `--cli` mode) as a client of the real
 * `mcp` command: over stdio and over HTTP with the token, in each era it can be asked for
 * (`--protocol-era legacy | modern | auto`), it lists the tools and calls `read`; then HTTP
 * without the token, which must be refused. Prints one line per run and exits 1 if any is wrong.
 *
 * The Inspector is not a devDependency: it is 120 packages and 112 MB (a web UI, a TUI, React,
 * Vite) for one check, so it is installed on first use under node_modules/.cache (npm, about a
 * minute), or taken from INSPECTOR_DIR (a folder where it is installed).
 *
 *   node bench/inspector.ts
 */
import { execFile, execFileSync, spawn } from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"

const VERSION = "2.12.0"
const REPO = NodePath.resolve(import.meta.dirname, "..")
const CLI = NodePath.join(REPO, "entry/cli.js")
const env = { ...process.env, PATH: `${NodePath.dirname(process.execPath)}:${process.env.PATH ?? ""}` }

const inspectorDir = (): string => {
  const given = process.env.INSPECTOR_DIR
  const dir = given ?? NodePath.join(REPO, "node_modules/.cache", `freecode-inspector-${VERSION}`)
  const bin = NodePath.join(dir, "node_modules/.bin/mcp-inspector")
  if (NodeFs.existsSync(bin)) return bin
  if (given !== undefined) throw new Error(`INSPECTOR_DIR=${given} has no node_modules/.bin/mcp-inspector`)
  NodeFs.mkdirSync(dir, { recursive: true })
  NodeFs.writeFileSync(NodePath.join(dir, "package.json"), '{"private":true}\n')
  process.stderr.write(`installing @modelcontextprotocol/inspector@${VERSION} in ${dir}\n`)
  execFileSync("npm", ["install", "--no-audit", "--no-fund", `@modelcontextprotocol/inspector@${VERSION}`], {
    cwd: dir,
    env,
    stdio: ["ignore", "ignore", "inherit"],
    timeout: 600_000
  })
  return bin
}

const inspector = inspectorDir()
const root = NodeFs.realpathSync(NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "freecode-inspector-")))
NodeFs.writeFileSync(NodePath.join(root, "notes.txt"), "alpha\nbeta\n")
const serverEnv = { ...env, FREECODE_STATE_DIR: NodePath.join(root, ".state") }

const run = (args: ReadonlyArray<string>) =>
  new Promise<{ json?: Record<string, unknown>; stderr: string }>((resolve) => {
    execFile(
      inspector,
      ["--cli", "--format", "json", "-q", ...args],
      { env: serverEnv, cwd: root, timeout: 180_000, maxBuffer: 16 * 1024 * 1024 },
      (_e, stdout, stderr) => {
        try {
          resolve({ json: JSON.parse(stdout) as Record<string, unknown>, stderr })
        } catch {
          resolve({ stderr: `${stdout}\n${stderr}`.trim() })
        }
      }
    )
  })

const server = spawn(process.execPath, [CLI, "mcp", "--root", root, "--http", "0"], {
  env: serverEnv,
  stdio: ["ignore", "ignore", "pipe"]
})
const [url, token] = await new Promise<[string, string]>((resolve, reject) => {
  let err = ""
  server.stderr.on("data", (b: Buffer) => {
    err += b.toString()
    const at = err.match(/at (http:\/\/\S+\/mcp);/)?.[1]
    const given = err.match(/token=(\S+)/)?.[1]
    if (at !== undefined && given !== undefined) resolve([at, given])
  })
  server.on("exit", (code) => reject(new Error(`mcp --http exited ${code}: ${err}`)))
})

type Result = { readonly tools?: Array<{ name: string }>; readonly content?: Array<{ text?: string }>; _meta?: object }
const targets: Record<string, ReadonlyArray<string>> = {
  stdio: [process.execPath, CLI, "mcp", "--root", root],
  "http + token": ["--server-url", url, "--header", `Authorization: Bearer ${token}`]
}
let wrong = 0
try {
  for (const [name, target] of Object.entries(targets)) {
    for (const era of ["legacy", "modern", "auto"]) {
      const list = await run(["--protocol-era", era, ...target, "--method", "tools/list"])
      const call = await run([
        "--protocol-era",
        era,
        ...target,
        "--method",
        "tools/call",
        "--tool-name",
        "read",
        "--tool-arg",
        "filePath=notes.txt"
      ])
      const tools = (list.json?.result as Result | undefined)?.tools?.length ?? 0
      const result = call.json?.result as Result | undefined
      const text = result?.content?.map((c) => c.text ?? "").join("") ?? ""
      // A 2026-07-28 result names the server in its _meta; a 2025 one does not.
      const revision =
        result?._meta !== undefined && "io.modelcontextprotocol/serverInfo" in result._meta
          ? "2026-07-28"
          : "2025-11-25"
      const ok =
        tools > 0 &&
        text.includes("2\tbeta") &&
        (era === "legacy" ? revision === "2025-11-25" : era === "modern" ? revision === "2026-07-28" : true)
      if (!ok) wrong++
      process.stdout.write(
        `${ok ? "✓" : "✗"} ${name}, --protocol-era ${era}: ${tools} tools listed, read ${text.includes("2\tbeta") ? "answered" : `failed: ${(call.stderr || JSON.stringify(call.json)).slice(0, 300)}`}, served as ${revision}\n`
      )
    }
  }
  const refused = await run([
    "--protocol-era",
    "auto",
    "--stored-auth-only",
    "--server-url",
    url,
    "--method",
    "tools/list"
  ])
  const refusedOk = refused.json?.result === undefined
  if (!refusedOk) wrong++
  process.stdout.write(
    `${refusedOk ? "✓" : "✗"} http without the token: ${refusedOk ? "refused" : "answered"} (${(refused.stderr || JSON.stringify(refused.json)).replace(/\s+/g, " ").slice(0, 200)})\n`
  )
} finally {
  server.kill("SIGTERM")
  NodeFs.rmSync(root, { recursive: true, force: true })
}
process.stdout.write(
  `load average: ${NodeOs.loadavg()
    .map((l) => l.toFixed(2))
    .join(" ")}\n`
)
process.exit(wrong === 0 ? 0 : 1)
