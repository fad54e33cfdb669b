/**
 * MCP round trips: the same SDK client, over stdio, calling our `read` and `ls` (served by
 * `freecode-tools mcp`) and server-filesystem's `read_text_file` and `list_directory`, on the same
 * files. Median round trip; target ≤ 1.0× server-filesystem.
 *
 * BENCH_MCP_ROUNDS (3) rounds, each with fresh servers: one server of each kind, as one client
 * would use it; BENCH_MCP_PROCESSES=2 (or more) runs that many of each side by side, the calls
 * spread over them (every extra live server evicts the others' code and data between calls,
 * which costs the longer path most: see docs/benchmarks.md). Each is warmed with
 * BENCH_MCP_WARMUP (500) calls, then BENCH_MCP_RUNS (1000) calls per kind are timed twice:
 *   - steady: blocks of 100 calls to one server, the servers taking turns block by block, so a
 *     drift in the machine's speed hits both kinds alike and each block sees a server as one
 *     client calling it does;
 *   - alternating: one call to each server in turn, so every call finds the caches holding the
 *     other servers' work (harder on the longer code path: ours).
 * The summary is the median, over the rounds, of each round's median.
 *   node bench/mcp.ts
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, unlinkSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join, resolve } from "node:path"
import { performance } from "node:perf_hooks"
import { setTimeout as sleep } from "node:timers/promises"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { getDefaultEnvironment, StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { Effect, ManagedRuntime } from "effect"
import { ToolSystem } from "../layers/live.ts"
import { Dispatcher } from "../src/dispatch/dispatcher.ts"
import { RACY_MS } from "../src/fs/stat-cache.ts"
import { fmt, paired, row, type Timing, time } from "./lib.ts"

const REPO = resolve(import.meta.dirname, "..")
const RUNS = Number(process.env.BENCH_MCP_RUNS ?? 1000)
/**
 * Calls made to each server before timing: a server answers thousands of calls in a session,
 * so what counts is its steady state, after the JIT has compiled its hot path (ours is longer
 * than server-filesystem's and takes more calls to warm; the first calls are timed separately).
 */
const WARMUP = Number(process.env.BENCH_MCP_WARMUP ?? 500)
const PROCESSES = Number(process.env.BENCH_MCP_PROCESSES ?? 1)
/**
 * Rounds with fresh servers: one process's JIT can land some 10% faster or slower for its whole
 * life, and this VM's speed drifts by as much from one minute to the next; the summary takes the
 * median of the rounds.
 */
const ROUNDS = Number(process.env.BENCH_MCP_ROUNDS ?? 3)
const BLOCK = 100

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

type Call = () => Promise<unknown>

/** One kind of server: a call to each of its processes. */
interface Side {
  readonly name: string
  readonly calls: ReadonlyArray<Call>
}

interface Measured extends Timing {
  /** Each process's own median, in ms. */
  readonly perProcess: ReadonlyArray<number>
}

const median = (xs: Array<number>) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!

/**
 * `runs` calls to each side, spread over its processes: `block` calls to one process, then the
 * same to the other side's process, and on through every process in turn. `before` runs
 * untimed ahead of every call (the changed-directory row touches its directory there).
 */
const interleaved = async (
  runs: number,
  block: number,
  sides: readonly [Side, Side],
  before: () => void = () => undefined
): Promise<readonly [Measured, Measured]> => {
  const samples = sides.map((side) => side.calls.map(() => [] as Array<number>))
  const perProcess = Math.ceil(runs / sides[0].calls.length)
  for (let done = 0; done < perProcess; done += block) {
    for (let p = 0; p < sides[0].calls.length; p++) {
      for (const [k, side] of sides.entries()) {
        for (let i = 0; i < Math.min(block, perProcess - done); i++) {
          before()
          const start = performance.now()
          await side.calls[p]!()
          samples[k]![p]!.push(performance.now() - start)
        }
      }
    }
  }
  const summarize = (side: Side, k: number): Measured => {
    const all = samples[k]!.flat().sort((a, b) => a - b)
    return {
      name: side.name,
      runs: all.length,
      medianMs: all[Math.floor(all.length / 2)]!,
      p90Ms: all[Math.floor(all.length * 0.9)]!,
      perProcess: samples[k]!.map(median)
    }
  }
  return [summarize(sides[0], 0), summarize(sides[1], 1)]
}

const measuredRow = (t: Measured, baseline?: Measured) => `${row(t, baseline)} ${t.perProcess.map(fmt).join(", ")} |`

/** One case of the round: server-filesystem's timing and ours. */
interface Pair {
  readonly what: string
  readonly theirs: Timing
  readonly ours: Timing
}

interface Round {
  readonly pairs: ReadonlyArray<Pair>
  /** Server CPU per call, µs: [server-filesystem, ours] for read and for ls. */
  readonly cpu: { readonly read: readonly [number, number]; readonly ls: readonly [number, number] }
  /** The round's full table, as the single-round bench printed it. */
  readonly table: ReadonlyArray<string>
}

/** The project every round lists and reads: one directory that stays as written, one that changes. */
const makeProject = () => {
  const root = mkdtempSync(join(tmpdir(), "bench-mcp-"))
  const dir = join(root, "settled")
  const changing = join(root, "changing")
  mkdirSync(dir)
  mkdirSync(changing)
  const line = "export const value = compute(alpha, beta) // a typical line of code\n"
  const file = join(dir, "file.ts")
  writeFileSync(file, line.repeat(Math.ceil(4096 / line.length)).slice(0, 4096))
  for (let i = 0; i < 50; i++) writeFileSync(join(dir, `f${String(i).padStart(2, "0")}.txt`), `${i}\n`)
  // No listing of this one can be reused (stat-cache.ts).
  for (let i = 0; i < 50; i++) writeFileSync(join(changing, `f${String(i).padStart(2, "0")}.txt`), `${i}\n`)
  return { root, dir, changing, file, written: Date.now() }
}

type Project = ReturnType<typeof makeProject>

/** Fresh servers, warmed, every case timed, the servers closed. */
const measureRound = async (project: Project): Promise<Round> => {
  const { root, dir, changing, file } = project
  let flip = false
  const change = () => {
    const marker = join(changing, "marker")
    flip ? unlinkSync(marker) : writeFileSync(marker, "")
    flip = !flip
  }

  const servers = await Promise.all(
    Array.from({ length: PROCESSES }, async () => ({
      // De-duplication would answer repeated identical reads with a pointer: measure real reads.
      ours: await connect(process.execPath, [join(REPO, "src/cli/main.ts"), "mcp", "--root", root], {
        FREECODE_READ_DEDUP: "0"
      }),
      theirs: await connect(join(REPO, "node_modules/.bin/mcp-server-filesystem"), [root])
    }))
  )
  try {
    const ourRead = (c: Client) => async () => ok(await c.callTool({ name: "read", arguments: { filePath: file } }))
    const theirRead = (c: Client) => async () =>
      ok(await c.callTool({ name: "read_text_file", arguments: { path: file } }))
    const ourList = (c: Client, path: string) => async () => ok(await c.callTool({ name: "ls", arguments: { path } }))
    const theirList = (c: Client, path: string) => async () =>
      ok(await c.callTool({ name: "list_directory", arguments: { path } }))
    /** `names`: server-filesystem's tool and ours; `what`: the case. */
    const sides = (
      names: readonly [string, string],
      what: string,
      theirs: (c: Client) => Call,
      ours: (c: Client) => Call
    ): readonly [Side, Side] => [
      { name: `server-filesystem ${names[0]} ${what}`, calls: servers.map((s) => theirs(s.theirs)) },
      { name: `freecode-tools mcp ${names[1]} ${what}`, calls: servers.map((s) => ours(s.ours)) }
    ]
    const alternating = (pair: readonly [Side, Side]) =>
      interleaved(RUNS, 1, [
        { ...pair[0], name: `${pair[0].name}, alternating` },
        { ...pair[1], name: `${pair[1].name}, alternating` }
      ])

    // The first calls after connecting, before either JIT has warmed up.
    const [fsFirst, ourFirst] = await paired(
      50,
      ["server-filesystem read_text_file, first 50 calls", theirRead(servers[0]!.theirs)],
      ["freecode-tools mcp read, first 50 calls", ourRead(servers[0]!.ours)],
      0
    )
    for (const s of servers) {
      for (let i = 0; i < WARMUP; i++) {
        await theirRead(s.theirs)()
        await ourRead(s.ours)()
        await theirList(s.theirs, dir)()
        await ourList(s.ours, dir)()
      }
    }
    const read = sides(["read_text_file", "read"], "(4 KiB)", theirRead, ourRead)
    const [fsRead, ourReadT] = await interleaved(RUNS, BLOCK, read)
    const [fsReadAlt, ourReadAlt] = await alternating(read)
    // A project's directories are older than the listing cache's racy window: so is this one.
    await sleep(Math.max(0, project.written + RACY_MS + 100 - Date.now()))
    const list = sides(
      ["list_directory", "ls"],
      "(51 entries)",
      (c) => theirList(c, dir),
      (c) => ourList(c, dir)
    )
    const [fsList, ourListT] = await interleaved(RUNS, BLOCK, list)
    const [fsListAlt, ourListAlt] = await alternating(list)
    const [fsChanging, ourChanging] = await interleaved(
      RUNS,
      BLOCK,
      sides(
        ["list_directory", "ls"],
        "(50 entries), directory changed before every call",
        (c) => theirList(c, changing),
        (c) => ourList(c, changing)
      ),
      change
    )
    const cpuRuns = RUNS * 5
    const { ours, theirs } = servers[0]!
    const cpu = {
      read: [
        await cpuPerCall(theirs.pid, cpuRuns, theirRead(theirs)),
        await cpuPerCall(ours.pid, cpuRuns, ourRead(ours))
      ],
      ls: [
        await cpuPerCall(theirs.pid, cpuRuns, theirList(theirs, dir)),
        await cpuPerCall(ours.pid, cpuRuns, ourList(ours, dir))
      ]
    } as const
    return {
      pairs: [
        { what: "read, first 50 calls", theirs: fsFirst, ours: ourFirst },
        { what: "read (4 KiB)", theirs: fsRead, ours: ourReadT },
        { what: "read (4 KiB), alternating", theirs: fsReadAlt, ours: ourReadAlt },
        { what: "ls (51 entries)", theirs: fsList, ours: ourListT },
        { what: "ls (51 entries), alternating", theirs: fsListAlt, ours: ourListAlt },
        { what: "ls, directory changed before every call", theirs: fsChanging, ours: ourChanging }
      ],
      cpu,
      table: [
        `${row(fsFirst)} |`,
        `${row(ourFirst, fsFirst)} |`,
        measuredRow(fsRead),
        measuredRow(ourReadT, fsRead),
        measuredRow(fsReadAlt),
        measuredRow(ourReadAlt, fsReadAlt),
        measuredRow(fsList),
        measuredRow(ourListT, fsList),
        measuredRow(fsListAlt),
        measuredRow(ourListAlt, fsListAlt),
        measuredRow(fsChanging),
        measuredRow(ourChanging, fsChanging)
      ]
    }
  } finally {
    await Promise.all(servers.flatMap((s) => [s.ours.close(), s.theirs.close()]))
  }
}

/** The same calls without MCP: what the execution path itself costs, so the MCP layer's share is visible. */
const inProcess = async (project: Project) => {
  process.env.FREECODE_READ_DEDUP = "0"
  const runtime = ManagedRuntime.make(ToolSystem.layer({ root: project.root }))
  try {
    const dispatcher = await runtime.runPromise(
      Effect.gen(function* () {
        return yield* Dispatcher
      })
    )
    let n = 0
    const direct = (name: string, args: unknown) => () =>
      runtime.runPromise(dispatcher.dispatch({ id: `b${n++}`, name, args }, { sessionId: "bench" }))
    return [
      await time("in-process Dispatcher.dispatch read (no MCP)", RUNS, direct("read", { filePath: project.file })),
      await time("in-process Dispatcher.dispatch ls (no MCP)", RUNS, direct("ls", { path: project.dir }))
    ] as const
  } finally {
    await runtime.dispose()
  }
}

const ratio = (x: number) => `${x.toFixed(2)}×`

export const benchMcp = async () => {
  const project = makeProject()
  try {
    const rounds: Array<Round> = []
    for (let r = 0; r < ROUNDS; r++) rounds.push(await measureRound(project))
    const [inRead, inList] = await inProcess(project)
    const µs = (x: number) => `${Math.round(x)} µs`
    const last = rounds[rounds.length - 1]!
    const summary = last.pairs.map((pair, i) => {
      const theirs = median(rounds.map((r) => r.pairs[i]!.theirs.medianMs))
      const ours = median(rounds.map((r) => r.pairs[i]!.ours.medianMs))
      const ratios = rounds.map((r) => r.pairs[i]!.ours.medianMs / r.pairs[i]!.theirs.medianMs)
      return `| ${pair.what} | ${fmt(theirs)} | ${fmt(ours)} | ${ratios.map(ratio).join(", ")} | **${ratio(median(ratios))}** |`
    })
    const cpuRatios = (k: "read" | "ls") => rounds.map((r) => ratio(r.cpu[k][1] / r.cpu[k][0])).join(", ")
    return [
      `${ROUNDS} rounds, each with fresh servers (${PROCESSES} of each kind), ${WARMUP} calls to warm them, then ${RUNS} calls per case. Medians of the rounds' medians:`,
      "",
      "| case | server-filesystem | freecode-tools mcp | ours / theirs, each round | median |",
      "| --- | --- | --- | --- | --- |",
      ...summary,
      "",
      `Server CPU per call (user + system, all threads, ${RUNS * 5} calls), ours / theirs, each round: read ${cpuRatios("read")}; ls ${cpuRatios("ls")}. Last round: read ${µs(last.cpu.read[0])} for server-filesystem, ${µs(last.cpu.read[1])} for freecode-tools; ls ${µs(last.cpu.ls[0])} and ${µs(last.cpu.ls[1])}.`,
      "",
      "The last round in full, with the in-process rows (the same calls through the Dispatcher, no MCP):",
      "",
      "| what | runs | median | p90 | vs baseline | each process |",
      "| --- | --- | --- | --- | --- | --- |",
      ...last.table.slice(0, 6),
      `${row(inRead, last.pairs[1]!.theirs)} |`,
      ...last.table.slice(6),
      `${row(inList, last.pairs[3]!.theirs)} |`
    ].join("\n")
  } finally {
    rmSync(project.root, { recursive: true, force: true })
  }
}

if (import.meta.url === `file://${process.argv[1]}`) console.log(await benchMcp())
