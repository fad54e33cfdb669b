/**
 * Start-up, side by side, each in a fresh process, the sides alternating within every round,
 * BENCH_STARTUP_RUNS (15) rounds; medians with the spread (quartiles):
 *   - importing the package as a consumer does (entry/index.js: the version check, then the
 *     bundle dist/lib/, built by `npm run build`) against importing `effect`; target ≤ 1.5×
 *     effect; and, for comparison, tsc's unbundled dist/src/index.js;
 *   - `freecode-tools mcp` (the CLI bundle, dist/cli/, over stdio) from spawn to the answer of its first
 *     tools/list, against @modelcontextprotocol/server-filesystem; target ≤ 1.0×; once opened the
 *     2025 way (initialize) and once the 2026-07-28 way (server/discover, then tools/list, each
 *     with its `_meta` envelope), which loads the SDK 2.x server side instead of 1.32's
 *     (server-filesystem speaks only the 2025 revisions: it is opened the 2025 way both times);
 *   - `freecode-tools --version` and `--help`.
 * Wall time is what a person waits; CPU time (user + system of the child) is printed beside it,
 * because on a machine shared with other work it moves far less than wall time does.
 *   npm run build && node bench/startup.ts     (BENCH_STARTUP_MCP_ONLY=1: the mcp rows alone)
 */
import { spawn, spawnSync } from "node:child_process"
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs"
import { loadavg, tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { performance } from "node:perf_hooks"
import { opening2025, opening2026 } from "../test/fixtures/mcp/openings.ts"

const REPO = resolve(import.meta.dirname, "..")
const RUNS = Number(process.env.BENCH_STARTUP_RUNS ?? 15)
const BUILT = join(REPO, "entry/index.js")
const UNBUNDLED = join(REPO, "dist/src/index.js")
if (!existsSync(join(REPO, "dist/lib/index.js")) || !existsSync(UNBUNDLED)) {
  throw new Error("run `npm run build` first: this measures dist/, what a package ships")
}

interface Sample {
  readonly wall: number
  readonly cpu: number
}

/** Wall time of `node -e "await import(spec)"`, and the CPU time the child reports having used. */
const importTime = (spec: string): Sample => {
  const started = performance.now()
  const code = `await import(${JSON.stringify(spec)}); const u = process.cpuUsage(); process.stdout.write(String((u.user + u.system) / 1000))`
  const r = spawnSync(process.execPath, ["--input-type=module", "-e", code], { cwd: REPO, encoding: "utf8" })
  if (r.status !== 0) throw new Error(`import ${spec} failed: ${r.stderr}`)
  return { wall: performance.now() - started, cpu: Number(r.stdout) }
}

/** Wall time of a CLI command run to its end (Node cannot read a finished child's CPU time). */
const commandTime = (args: ReadonlyArray<string>): Sample => {
  const started = performance.now()
  const r = spawnSync(process.execPath, args, { cwd: REPO, stdio: "ignore" })
  if (r.status !== 0) throw new Error(`${args.join(" ")} exited ${r.status}`)
  return { wall: performance.now() - started, cpu: Number.NaN }
}

/** user + system time of a running process, from /proc (Linux); NaN elsewhere. */
const TICK_MS = 1000 / Number(spawnSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).stdout.trim() || 100)
const cpuOf = (pid: number | undefined): number => {
  try {
    // Fields after the command name (which may hold spaces, so split after its closing paren).
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ")
    return (Number(fields[11]) + Number(fields[12])) * TICK_MS
  } catch {
    return Number.NaN
  }
}

const HELLO = opening2025("bench")
const HELLO_2026 = opening2026("bench")

/** Spawn to the first tools/list answer, over stdio. */
const firstList = (args: ReadonlyArray<string>, hello = HELLO) =>
  new Promise<Sample>((done, fail) => {
    const started = performance.now()
    const child = spawn(process.execPath, args, { cwd: REPO, stdio: ["pipe", "pipe", "ignore"], env })
    let out = ""
    child.stdout.on("data", (b: Buffer) => {
      out += b.toString()
      if (out.includes('"id":2')) {
        const wall = performance.now() - started
        const cpu = cpuOf(child.pid)
        child.kill()
        done({ wall, cpu })
      }
    })
    child.on("error", fail)
    child.stdin.write(hello)
  })

const project = mkdtempSync(join(tmpdir(), "freecode-bench-startup-"))
// The key that signs 2026 approvals is made in the state folder on first use: a folder of the bench's own.
const stateDir = mkdtempSync(join(tmpdir(), "freecode-bench-state-"))
const env = { ...process.env, FREECODE_STATE_DIR: stateDir }
const MCP_ONLY = process.env.BENCH_STARTUP_MCP_ONLY === "1"
const filesystem = join(REPO, "node_modules/@modelcontextprotocol/server-filesystem/dist/index.js")
// What an installed package's entry/cli.js does (in a clone it runs src/ instead): the version
// check, Node's compile cache, then the bundle, compiled eagerly (entry/bundle-start.js).
const INSTALLED_CLI = `import "./entry/node-check.js"; (await import("node:module")).enableCompileCache(); await import("./entry/bundle-start.js")`
// With -e there is no script in argv: entry/cli.js stands in for it, so main.ts reads argv.slice(2) as usual.
const cliArgs = (...args: Array<string>) => ["--input-type=module", "-e", INSTALLED_CLI, "--", "entry/cli.js", ...args]
const samples = {
  effect: [] as Array<Sample>,
  ours: [] as Array<Sample>,
  unbundled: [] as Array<Sample>,
  fsList: [] as Array<Sample>,
  ourList: [] as Array<Sample>,
  fsList2: [] as Array<Sample>,
  ourList2026: [] as Array<Sample>,
  version: [] as Array<Sample>,
  help: [] as Array<Sample>
}
try {
  for (let i = 0; i < RUNS; i++) {
    // Alternate which side goes first, so neither always runs on a warmer (or busier) machine.
    const pairs: Array<() => Promise<void>> = [
      async () => void samples.effect.push(importTime("effect")),
      async () => void samples.ours.push(importTime(BUILT)),
      async () => void samples.unbundled.push(importTime(UNBUNDLED))
    ]
    const lists: Array<() => Promise<void>> = [
      async () => void samples.fsList.push(await firstList([filesystem, project])),
      async () => void samples.ourList.push(await firstList(cliArgs("mcp", "--root", project)))
    ]
    const modern: Array<() => Promise<void>> = [
      async () => void samples.fsList2.push(await firstList([filesystem, project])),
      async () => void samples.ourList2026.push(await firstList(cliArgs("mcp", "--root", project), HELLO_2026))
    ]
    if (!MCP_ONLY) for (const run of i % 2 === 0 ? pairs : pairs.toReversed()) await run()
    for (const run of i % 2 === 0 ? lists : lists.toReversed()) await run()
    for (const run of i % 2 === 0 ? modern : modern.toReversed()) await run()
    if (MCP_ONLY) continue
    samples.version.push(commandTime(cliArgs("--version")))
    samples.help.push(commandTime(cliArgs("--help")))
  }
} finally {
  rmSync(project, { recursive: true, force: true })
  rmSync(stateDir, { recursive: true, force: true })
}

const quantile = (xs: ReadonlyArray<number>, q: number) => {
  const sorted = [...xs].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!
}
const ms = (x: number) => (Number.isNaN(x) ? "—" : `${Math.round(x)} ms`)
const summary = (xs: ReadonlyArray<number>) =>
  `${ms(quantile(xs, 0.5))} (${Math.round(quantile(xs, 0.25))}–${Math.round(quantile(xs, 0.75))})`
const row = (label: string, key: keyof typeof samples, against?: keyof typeof samples, target?: string) => {
  const wall = samples[key].map((s) => s.wall)
  const cpu = samples[key].map((s) => s.cpu)
  let line = `${label.padEnd(32)} wall ${summary(wall).padEnd(22)} cpu ${Number.isNaN(cpu[0]) ? "—" : summary(cpu)}`
  if (against !== undefined) {
    const ratio = (f: (s: Sample) => number) => {
      // The ratio of medians, and the spread of the per-round ratios (each round's pair ran back to back).
      const perRound = samples[key].map((s, i) => f(s) / f(samples[against][i]!))
      return `${(quantile(samples[key].map(f), 0.5) / quantile(samples[against].map(f), 0.5)).toFixed(2)}× (${quantile(perRound, 0.25).toFixed(2)}–${quantile(perRound, 0.75).toFixed(2)})`
    }
    line += `\n${"".padEnd(32)} wall ${ratio((s) => s.wall)}, cpu ${ratio((s) => s.cpu)} ${against}   (target ${target})`
  }
  console.log(line)
}
console.log(
  `node ${process.version}, ${RUNS} rounds, medians (quartiles in brackets); load average ${loadavg()
    .map((l) => l.toFixed(1))
    .join(" ")}`
)
if (!MCP_ONLY) {
  row("import effect", "effect")
  row("import freecode-tools", "ours", "effect", "≤ 1.5×")
  row("import dist/src (unbundled)", "unbundled", "effect", "—")
}
row("server-filesystem: tools/list", "fsList")
row("freecode-tools mcp: tools/list", "ourList", "fsList", "≤ 1.0×")
row("server-filesystem (again)", "fsList2")
row("mcp, 2026 opening: tools/list", "ourList2026", "fsList2", "≤ 1.0×")
if (!MCP_ONLY) {
  row("freecode-tools --version", "version")
  row("freecode-tools --help", "help")
}
