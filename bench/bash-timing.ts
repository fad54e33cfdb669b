/**
 * bash's own latency around a command's end: how long after the shell exits (or the timeout
 * fires) the call returns, and how far past the output limit a fast writer gets.
 *   node bench/bash-timing.ts [runs]
 * Targets: within 100 ms of the shell's exit or of the timeout; a bounded overshoot.
 */
import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { performance } from "node:perf_hooks"
import { fmt } from "./lib.ts"
import { makeRunner } from "./system.ts"

const median = (xs: Array<number>) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!

const main = async () => {
  const runs = Number(process.argv[2] ?? 5)
  const root = mkdtempSync(join(tmpdir(), "bench-bash-timing-"))
  const limitBytes = 1024 * 1024 * 1024
  const runner = makeRunner(root, { env: { FREECODE_OUTPUT_SPILL_BYTES: String(limitBytes) } })
  await runner.call("bash", { command: "true" })
  const cases: Array<{ what: string; args: Record<string, unknown>; floorMs: number }> = [
    { what: "`echo started` (baseline)", args: { command: "echo started" }, floorMs: 0 },
    {
      what: "`sleep 100 & echo started` (a background child outlives the shell)",
      args: { command: "sleep 100 & echo started" },
      floorMs: 0
    },
    { what: "`sleep 10` with timeout 3000", args: { command: "sleep 10", timeout: 3000 }, floorMs: 3000 },
    {
      what: "`sleep 10; echo after` with timeout 3000 (bash forks the sleep)",
      args: { command: "sleep 10; echo after", timeout: 3000 },
      floorMs: 3000
    },
    {
      what: "`sleep 100 & sleep 10` with timeout 3000",
      args: { command: "sleep 100 & sleep 10", timeout: 3000 },
      floorMs: 3000
    }
  ]
  const times = cases.map(() => [] as Array<number>)
  // Alternated, so drift in the machine's speed hits every case alike.
  for (let i = 0; i < runs; i++) {
    for (const [n, c] of cases.entries()) {
      const start = performance.now()
      await runner.call("bash", c.args)
      times[n]!.push(performance.now() - start)
    }
  }
  console.log("| call | runs | median | max | past the shell's exit / the timeout |\n| --- | --- | --- | --- | --- |")
  const base = median(times[0]!)
  for (const [n, c] of cases.entries()) {
    const m = median(times[n]!)
    const over = c.floorMs === 0 ? m - base : m - c.floorMs
    console.log(`| ${c.what} | ${runs} | ${fmt(m)} | ${fmt(Math.max(...times[n]!))} | ${n === 0 ? "—" : fmt(over)} |`)
  }
  const overs: Array<number> = []
  const spent: Array<number> = []
  for (let i = 0; i < Math.min(runs, 3); i++) {
    const start = performance.now()
    const result = await runner.call("bash", { command: "cat /dev/zero" })
    spent.push(performance.now() - start)
    overs.push(result.outputChars - limitBytes)
  }
  console.log(
    `\n\`cat /dev/zero\` against the ${limitBytes / 1024 / 1024} MiB limit: stopped ${overs.map((o) => `${(o / 1e6).toFixed(1)} MB`).join(", ")} past it (status error, \`stopped: output over ${limitBytes} bytes\`), in ${spent.map((s) => fmt(s)).join(", ")}`
  )
  await runner.dispose()
}

await main()
