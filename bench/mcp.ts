/**
 * MCP round trips: the same SDK client, over stdio, calling our `read` and `ls` (served by
 * `freecode-tools mcp`) and server-filesystem's `read_text_file` and `list_directory`, on the same
 * files, call by call in alternation, after BENCH_MCP_WARMUP (500) calls to each. Median round
 * trip; target ≤ 1.0× server-filesystem. BENCH_MCP_ROUNDS (7) more rounds show how the ratio
 * moves from one minute to the next on a shared machine.
 *   node bench/mcp.ts
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join, resolve } from "node:path"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { getDefaultEnvironment, StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { Effect, ManagedRuntime } from "effect"
import { ToolSystem } from "../layers/live.ts"
import { Dispatcher } from "../src/dispatch/dispatcher.ts"
import { header, paired, row, time } from "./lib.ts"

const REPO = resolve(import.meta.dirname, "..")
const RUNS = Number(process.env.BENCH_MCP_RUNS ?? 1000)
/**
 * Calls made to each server before timing: a server answers thousands of calls in a session,
 * so what counts is its steady state, after the JIT has compiled its hot path (ours is longer
 * than server-filesystem's and takes more calls to warm; the first calls are timed separately).
 */
const WARMUP = Number(process.env.BENCH_MCP_WARMUP ?? 500)
/** Further rounds of paired calls, each giving its own ratio: how much the ratio moves run to run. */
const ROUNDS = Number(process.env.BENCH_MCP_ROUNDS ?? 7)

const connect = async (command: string, args: Array<string>, env: Record<string, string> = {}) => {
  const client = new Client({ name: "bench", version: "1.0.0" })
  const transport = new StdioClientTransport({
    command,
    args,
    env: { ...getDefaultEnvironment(), PATH: `${dirname(process.execPath)}:${process.env.PATH ?? ""}`, ...env },
    stderr: "ignore"
  })
  await client.connect(transport)
  return Object.assign(client, { pid: transport.pid ?? 0 })
}

/** CPU time (user + system, all threads) a process has used so far, in µs. */
const cpuOf = (pid: number): number => {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ")
  return ((Number(fields[11]) + Number(fields[12])) * 1_000_000) / 100 // clock ticks of 1/100 s
}

/** The server's CPU per call over `runs` calls: what a call costs the machine, whatever the latency. */
const cpuPerCall = async (pid: number, runs: number, call: () => Promise<unknown>) => {
  const before = cpuOf(pid)
  for (let i = 0; i < runs; i++) await call()
  return (cpuOf(pid) - before) / runs
}

const ok = (result: Awaited<ReturnType<Client["callTool"]>>) => {
  if (result.isError === true) throw new Error(`call failed: ${JSON.stringify(result.content).slice(0, 300)}`)
}

export const benchMcp = async () => {
  const dir = mkdtempSync(join(tmpdir(), "bench-mcp-"))
  const line = "export const value = compute(alpha, beta) // a typical line of code\n"
  const file = join(dir, "file.ts")
  writeFileSync(file, line.repeat(Math.ceil(4096 / line.length)).slice(0, 4096))
  for (let i = 0; i < 50; i++) writeFileSync(join(dir, `f${String(i).padStart(2, "0")}.txt`), `${i}\n`)

  // De-duplication would answer repeated identical reads with a pointer: measure real reads.
  const ours = await connect(process.execPath, [join(REPO, "src/cli/main.ts"), "mcp", "--root", dir], {
    FREECODE_READ_DEDUP: "0"
  })
  const theirs = await connect(join(REPO, "node_modules/.bin/mcp-server-filesystem"), [dir])
  try {
    const theirRead = async () => ok(await theirs.callTool({ name: "read_text_file", arguments: { path: file } }))
    const ourReadCall = async () => ok(await ours.callTool({ name: "read", arguments: { filePath: file } }))
    const theirList = async () => ok(await theirs.callTool({ name: "list_directory", arguments: { path: dir } }))
    const ourListCall = async () => ok(await ours.callTool({ name: "ls", arguments: { path: dir } }))
    // The first calls after connecting, before either JIT has warmed up.
    const [fsFirst, ourFirst] = await paired(
      50,
      ["server-filesystem read_text_file, first 50 calls", theirRead],
      ["freecode-tools mcp read, first 50 calls", ourReadCall],
      0
    )
    const [fsRead, ourRead] = await paired(
      RUNS,
      ["server-filesystem read_text_file (4 KiB)", theirRead],
      ["freecode-tools mcp read (4 KiB)", ourReadCall],
      WARMUP
    )
    const [fsList, ourList] = await paired(
      RUNS,
      ["server-filesystem list_directory (51 entries)", theirList],
      ["freecode-tools mcp ls (51 entries)", ourListCall],
      WARMUP
    )
    const ratios = { read: [] as Array<number>, ls: [] as Array<number> }
    for (let r = 0; r < ROUNDS; r++) {
      const [a, b] = await paired(300, ["", theirRead], ["", ourReadCall], 0)
      const [c, d] = await paired(300, ["", theirList], ["", ourListCall], 0)
      ratios.read.push(b.medianMs / a.medianMs)
      ratios.ls.push(d.medianMs / c.medianMs)
    }
    const spread = (xs: Array<number>) => {
      const sorted = [...xs].sort((x, y) => x - y)
      return `${xs.map((x) => x.toFixed(2)).join(", ")} (median ${sorted[Math.floor(sorted.length / 2)]!.toFixed(2)}×)`
    }
    // The same calls without MCP: what the execution path itself costs (permissions, hooks,
    // orchestrator, store, the tool's own work), so the MCP layer's share is visible.
    process.env.FREECODE_READ_DEDUP = "0"
    const runtime = ManagedRuntime.make(ToolSystem.layer({ root: dir }))
    const dispatcher = await runtime.runPromise(
      Effect.gen(function* () {
        return yield* Dispatcher
      })
    )
    let n = 0
    const direct = (name: string, args: unknown) => () =>
      runtime.runPromise(dispatcher.dispatch({ id: `b${n++}`, name, args }, { sessionId: "bench" }))
    const cpuRuns = RUNS * 5
    const theirCpu = await cpuPerCall(theirs.pid, cpuRuns, () =>
      theirs.callTool({ name: "read_text_file", arguments: { path: file } })
    )
    const ourCpu = await cpuPerCall(ours.pid, cpuRuns, () =>
      ours.callTool({ name: "read", arguments: { filePath: file } })
    )
    const inRead = await time("in-process Dispatcher.dispatch read (no MCP)", RUNS, direct("read", { filePath: file }))
    const inList = await time("in-process Dispatcher.dispatch ls (no MCP)", RUNS, direct("ls", { path: dir }))
    await runtime.dispose()
    return [
      header,
      row(fsFirst),
      row(ourFirst, fsFirst),
      row(fsRead),
      row(ourRead, fsRead),
      row(inRead, fsRead),
      row(fsList),
      row(ourList, fsList),
      row(inList, fsList),
      "",
      `Ratio in ${ROUNDS} further rounds of 300 paired calls each: read ${spread(ratios.read)}; ls ${spread(ratios.ls)}.`,
      "",
      `Server CPU per read call (user + system, all threads, ${cpuRuns} calls): server-filesystem ${Math.round(theirCpu)} µs, freecode-tools ${Math.round(ourCpu)} µs (${(ourCpu / theirCpu).toFixed(2)}×).`
    ].join("\n")
  } finally {
    await ours.close()
    await theirs.close()
    rmSync(dir, { recursive: true, force: true })
  }
}

if (import.meta.url === `file://${process.argv[1]}`) console.log(await benchMcp())
