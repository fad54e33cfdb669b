/**
 * The official MCP conformance suite (`@modelcontextprotocol/conformance`) against `mcp --http`,
 * every server scenario, per revision: prints one line per scenario with its passed and failed
 * checks, and the totals. The server is the test build with the suite's fixture tools
 * (test/fixtures/mcp/serve.ts), on loopback with `--auth none` (the suite sends no token).
 *   - 2025-11-25: the installed suite (0.1.16, the newest release), its active scenarios;
 *   - 2026-07-28: a pre-release that has that revision's scenarios (CONFORMANCE_2026, default
 *     @modelcontextprotocol/conformance@0.2.0-alpha.12, fetched by npx), `--requirements
 *     2026-07-28`: exactly what the revision requires (extensions, such as tasks, included).
 *
 *   node bench/conformance.ts            (CONFORMANCE_ONLY=2025-11-25 or 2026-07-28: one of them)
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

const PRE_RELEASE = process.env.CONFORMANCE_2026 ?? "@modelcontextprotocol/conformance@0.2.0-alpha.12"
const runs: Record<string, { readonly command: string; readonly args: Array<string> }> = {
  "2025-11-25": { command: NodePath.join(BIN, "conformance"), args: ["server", "--url", url] },
  "2026-07-28": {
    command: "npx",
    args: ["-y", PRE_RELEASE, "server", "--url", url, "--requirements", "2026-07-28", "--timeout", "60000"]
  }
}

const suite = (command: string, args: Array<string>) =>
  new Promise<string>((resolve) => {
    const outDir = NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "freecode-conformance-"))
    const child = spawn(command, [...args, "-o", outDir], { cwd: outDir, env })
    let out = ""
    child.stdout.on("data", (b: Buffer) => (out += b.toString()))
    child.stderr.on("data", (b: Buffer) => (out += b.toString()))
    child.on("close", () => {
      NodeFs.rmSync(outDir, { recursive: true, force: true })
      resolve(out)
    })
  })

try {
  for (const [revision, run] of Object.entries(runs)) {
    if (process.env.CONFORMANCE_ONLY !== undefined && process.env.CONFORMANCE_ONLY !== revision) continue
    const output = await suite(run.command, run.args)
    let passed = 0
    let failed = 0
    let scenarios = 0
    let clean = 0
    process.stdout.write(`\n${revision}\n`)
    for (const m of output.matchAll(/^\s*([✓✗])\s+([\w-]+): (\d+) passed, (\d+) failed/gmu)) {
      scenarios++
      passed += Number(m[3])
      failed += Number(m[4])
      if (m[4] === "0") clean++
      process.stdout.write(`${m[1]} ${m[2]}: ${m[3]} passed, ${m[4]} failed\n`)
    }
    if (scenarios === 0) process.stdout.write(output.slice(-3000))
    process.stdout.write(
      `${revision}: ${scenarios} scenarios, ${clean} with no failed check; checks: ${passed} passed, ${failed} failed\n`
    )
  }
} finally {
  server.kill("SIGTERM")
}
