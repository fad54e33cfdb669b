/**
 * The official MCP conformance suite's client scenarios against our client: src/mcp/connect.ts
 * (and src/mcp/auth/login.ts where a scenario's server wants OAuth), driven by
 * test/fixtures/mcp/conformance-client.ts. One line per scenario with its passed, failed and
 * warned checks, and the totals, per revision:
 *   - 2025-11-25: the installed suite (0.1.16), every client scenario it lists for that revision;
 *   - 2026-07-28: the pre-release with that revision's scenarios (CONFORMANCE_2026, default
 *     @modelcontextprotocol/conformance@0.2.0-alpha.12, fetched by npx), the scenarios it lists
 *     for 2026-07-28.
 *
 *   node bench/conformance-client.ts        (CONFORMANCE_ONLY=2025-11-25 or 2026-07-28: one of them)
 */
import { spawn, spawnSync } from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"

const REPO = NodePath.resolve(import.meta.dirname, "..")
const BIN = NodePath.join(REPO, "node_modules/.bin")
const env = { ...process.env, PATH: `${NodePath.dirname(process.execPath)}:${BIN}:${process.env.PATH ?? ""}` }
const CLIENT = `${process.execPath} ${NodePath.join(REPO, "test/fixtures/mcp/conformance-client.ts")}`
const PRE_RELEASE = process.env.CONFORMANCE_2026 ?? "@modelcontextprotocol/conformance@0.2.0-alpha.12"

const suites: Record<string, ReadonlyArray<string>> = {
  "2025-11-25": [NodePath.join(BIN, "conformance")],
  "2026-07-28": ["npx", "-y", PRE_RELEASE]
}

/** The client scenarios a suite lists for `revision` (extensions left out). */
const scenariosOf = (suite: ReadonlyArray<string>, revision: string) => {
  const out = spawnSync(suite[0]!, [...suite.slice(1), "list"], { env, encoding: "utf8" }).stdout
  const client = out.slice(out.indexOf("Client scenarios"), out.indexOf("Authorization server scenarios") >>> 0)
  return [...client.matchAll(/^\s+- (\S+) \[([^\]]+)\]/gm)]
    .filter((m) => m[2]!.split(",").includes(revision))
    .map((m) => m[1]!)
}

const run = (suite: ReadonlyArray<string>, scenario: string) =>
  new Promise<string>((resolve) => {
    const outDir = NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "freecode-conformance-client-"))
    const child = spawn(
      suite[0]!,
      [...suite.slice(1), "client", "--command", CLIENT, "--scenario", scenario, "--timeout", "60000", "-o", outDir],
      { cwd: outDir, env }
    )
    let out = ""
    child.stdout.on("data", (b: Buffer) => (out += b.toString()))
    child.stderr.on("data", (b: Buffer) => (out += b.toString()))
    child.on("close", () => {
      NodeFs.rmSync(outDir, { recursive: true, force: true })
      resolve(out)
    })
  })

for (const [revision, suite] of Object.entries(suites)) {
  if (process.env.CONFORMANCE_ONLY !== undefined && process.env.CONFORMANCE_ONLY !== revision) continue
  const totals = { scenarios: 0, clean: 0, passed: 0, failed: 0, warnings: 0 }
  process.stdout.write(`\n${revision}\n`)
  for (const scenario of scenariosOf(suite, revision)) {
    const output = await run(suite, scenario)
    // The suite colours its output.
    const plain = output.replace(/\u001b\[[0-9;]*m/g, "")
    const m = plain.match(/Passed: (\d+)\/(\d+), (\d+) failed, (\d+) warnings/)
    totals.scenarios++
    if (m === null) {
      totals.failed++
      process.stdout.write(
        `✗ ${scenario}: no result (${plain.trim().split("\n").slice(-3).join(" | ").slice(0, 300)})\n`
      )
      continue
    }
    const [passed, failed, warnings] = [Number(m[1]), Number(m[3]), Number(m[4])]
    totals.passed += passed
    totals.failed += failed
    totals.warnings += warnings
    if (failed === 0) totals.clean++
    const failing = [...plain.matchAll(/\[([\w-]+)\s*\]\s+(FAILURE|WARNING)/g)].map((f) => `${f[1]} ${f[2]}`)
    process.stdout.write(
      `${failed === 0 ? "✓" : "✗"} ${scenario}: ${passed} passed, ${failed} failed, ${warnings} warnings${failing.length > 0 ? ` (${[...new Set(failing)].join(", ")})` : ""}\n`
    )
  }
  process.stdout.write(
    `${revision}: ${totals.scenarios} scenarios, ${totals.clean} with no failed check; checks: ${totals.passed} passed, ${totals.failed} failed, ${totals.warnings} warnings\n`
  )
}
