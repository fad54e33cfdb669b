/**
 * Start-up, side by side, each in a fresh process, alternating, median of BENCH_STARTUP_RUNS (7):
 *   - importing the package (dist/src/index.js, built by `npm run build`) against importing
 *     `effect`; target ≤ 1.5× effect;
 *   - `freecode-tools mcp` (the built CLI, over stdio) from spawn to the answer of its first
 *     tools/list, against @modelcontextprotocol/server-filesystem; target ≤ 1.0×;
 *   - `freecode-tools --version`.
 *   npm run build && node bench/startup.ts
 */
import { spawn, spawnSync } from "node:child_process"
import { existsSync, mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { performance } from "node:perf_hooks"

const REPO = resolve(import.meta.dirname, "..")
const RUNS = Number(process.env.BENCH_STARTUP_RUNS ?? 7)
const BUILT = join(REPO, "dist/src/index.js")
if (!existsSync(BUILT)) throw new Error("run `npm run build` first: this measures dist/, what a package ships")

const median = (xs: ReadonlyArray<number>) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!

/** Wall time of `node -e "await import(spec)"`, and its peak resident set. */
const importTime = (spec: string) => {
  const started = performance.now()
  const r = spawnSync(process.execPath, ["--input-type=module", "-e", `await import(${JSON.stringify(spec)})`], {
    cwd: REPO
  })
  if (r.status !== 0) throw new Error(`import ${spec} failed: ${r.stderr}`)
  return performance.now() - started
}

const HELLO = [
  {
    jsonrpc: "2.0",
    id: 1,
    method: "initialize",
    params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "bench", version: "1" } }
  },
  { jsonrpc: "2.0", method: "notifications/initialized" },
  { jsonrpc: "2.0", id: 2, method: "tools/list" }
]
  .map((m) => `${JSON.stringify(m)}\n`)
  .join("")

/** Spawn to the first tools/list answer, over stdio. */
const firstList = (args: ReadonlyArray<string>) =>
  new Promise<number>((done, fail) => {
    const started = performance.now()
    const child = spawn(process.execPath, args, { cwd: REPO, stdio: ["pipe", "pipe", "ignore"] })
    let out = ""
    child.stdout.on("data", (b: Buffer) => {
      out += b.toString()
      if (out.includes('"id":2')) {
        const ms = performance.now() - started
        child.kill()
        done(ms)
      }
    })
    child.on("error", fail)
    child.stdin.write(HELLO)
  })

const project = mkdtempSync(join(tmpdir(), "freecode-bench-startup-"))
const filesystem = join(REPO, "node_modules/@modelcontextprotocol/server-filesystem/dist/index.js")
const cli = join(REPO, "dist/src/cli/main.js")
const samples = {
  effect: [] as Array<number>,
  ours: [] as Array<number>,
  fsList: [] as Array<number>,
  ourList: [] as Array<number>,
  version: [] as Array<number>
}
try {
  for (let i = 0; i < RUNS; i++) {
    samples.effect.push(importTime("effect"))
    samples.ours.push(importTime(BUILT))
    samples.fsList.push(await firstList([filesystem, project]))
    samples.ourList.push(await firstList([cli, "mcp", "--root", project]))
    const started = performance.now()
    spawnSync(process.execPath, [cli, "--version"])
    samples.version.push(performance.now() - started)
  }
} finally {
  rmSync(project, { recursive: true, force: true })
}
const ms = (x: number) => `${Math.round(x)} ms`
const ratio = (a: number, b: number) => `${(a / b).toFixed(2)}×`
const m = Object.fromEntries(Object.entries(samples).map(([k, v]) => [k, median(v)])) as Record<
  keyof typeof samples,
  number
>
console.log(`node ${process.version}, ${RUNS} runs each, medians`)
console.log(`import effect                 ${ms(m.effect)}`)
console.log(`import freecode-tools (dist)  ${ms(m.ours)}   ${ratio(m.ours, m.effect)} effect   (target ≤ 1.5×)`)
console.log(`server-filesystem: tools/list ${ms(m.fsList)}`)
console.log(
  `freecode-tools mcp: tools/list ${ms(m.ourList)}   ${ratio(m.ourList, m.fsList)} server-filesystem   (target ≤ 1.0×)`
)
console.log(`freecode-tools --version      ${ms(m.version)}`)
