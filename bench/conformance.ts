/**
 * The official MCP conformance suite (`@modelcontextprotocol/conformance`) against `mcp --http`,
 * every server scenario: prints one line per scenario with its passed and failed checks, and the
 * totals. The server is the test build with the suite's fixture tools
 * (test/fixtures/mcp/serve.ts), on loopback with `--auth none` (the suite sends no token).
 *
 *   node bench/conformance.ts
 */
import { spawn } from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"

const REPO = NodePath.resolve(import.meta.dirname, "..")
const BIN = NodePath.join(REPO, "node_modules/.bin")
const env = { ...process.env, PATH: `${NodePath.dirname(process.execPath)}:${BIN}:${process.env.PATH ?? ""}` }

const server = spawn(
  process.execPath,
  [NodePath.join(REPO, "test/fixtures/mcp/serve.ts"), "mcp", "--http", "0", "--auth", "none", "--root", REPO],
  { stdio: ["ignore", "ignore", "pipe"], env }
)
const url = await new Promise<string>((resolve, reject) => {
  let err = ""
  const timer = setTimeout(() => reject(new Error(`no URL within 120 s: ${err}`)), 120_000)
  server.stderr.on("data", (b: Buffer) => {
    err += b.toString()
    const found = err.match(/at (http:\/\/\S+\/mcp);/)?.[1]
    if (found !== undefined && err.includes("--auth none")) {
      clearTimeout(timer)
      resolve(found)
    }
  })
  server.on("exit", (code) => reject(new Error(`server exited ${code}: ${err}`)))
})

const outDir = NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "freecode-conformance-"))
const output = await new Promise<string>((resolve) => {
  const child = spawn(NodePath.join(BIN, "conformance"), ["server", "--url", url, "-o", outDir], { cwd: outDir, env })
  let out = ""
  child.stdout.on("data", (b: Buffer) => (out += b.toString()))
  child.stderr.on("data", (b: Buffer) => (out += b.toString()))
  child.on("close", () => resolve(out))
})
server.kill("SIGTERM")
NodeFs.rmSync(outDir, { recursive: true, force: true })

let passed = 0
let failed = 0
let scenarios = 0
let clean = 0
for (const m of output.matchAll(/^\s*([✓✗])\s+([\w-]+): (\d+) passed, (\d+) failed/gmu)) {
  scenarios++
  passed += Number(m[3])
  failed += Number(m[4])
  if (m[4] === "0") clean++
  process.stdout.write(`${m[1]} ${m[2]}: ${m[3]} passed, ${m[4]} failed\n`)
}
if (scenarios === 0) process.stdout.write(output.slice(-3000))
process.stdout.write(
  `\n${scenarios} scenarios, ${clean} with no failed check; checks: ${passed} passed, ${failed} failed\n`
)
