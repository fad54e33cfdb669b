/**
 * bash on a huge output: `yes | head -c 200000000` (200 MB) through the bash tool — written by
 * the command straight into the store's file, followed and counted, shaped from head and tail —
 * against the same command with its output sent to /dev/null. Targets: ≤ 2× the wall time,
 * and peak RSS ≤ the store budget + 100 MB.
 *   node bench/bash.ts [runs]
 * Each tool run is a fresh process (so its peak RSS is its own); times are of the call alone.
 */
import { spawn, spawnSync } from "node:child_process"
import { existsSync, mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { performance } from "node:perf_hooks"
import { defaultOutputSettings } from "../src/output/config.ts"
import { fmt } from "./lib.ts"
import { expectOk, makeRunner } from "./system.ts"

const BYTES = 200_000_000
const COMMAND = `yes | head -c ${BYTES}`

const child = async (command: string) => {
  const runner = makeRunner(process.cwd())
  await runner.call("bash", { command: "true" }) // warm: first spawn, layers built
  const start = performance.now()
  const result = expectOk(await runner.call("bash", { command }))
  const ms = performance.now() - start
  await runner.dispose()
  process.stdout.write(
    JSON.stringify({
      ms,
      maxRssMB: process.resourceUsage().maxRSS / 1024,
      outputChars: result.outputChars,
      modelChars: result.modelOutput.length
    })
  )
}

/** The floor for any Node reader: node:child_process reading the same pipe and dropping the bytes. */
const plainNode = (): Promise<number> =>
  new Promise((resolve) => {
    const start = performance.now()
    const child = spawn("/bin/bash", ["-c", COMMAND], { stdio: ["ignore", "pipe", "ignore"] })
    child.stdout.on("data", () => {})
    child.on("close", () => resolve(performance.now() - start))
  })

const median = (xs: Array<number>) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!

const main = async () => {
  const runs = Number(process.argv[2] ?? 5)
  const base: Array<number> = []
  const tool: Array<{ ms: number; maxRssMB: number; outputChars: number; modelChars: number }> = []
  const devnull: Array<number> = []
  const plain: Array<number> = []
  const toFile: Array<number> = []
  const file = join(mkdtempSync(join(tmpdir(), "bench-bash-")), "out")
  for (let i = 0; i < runs; i++) {
    plain.push(await plainNode())
    const start = performance.now()
    spawnSync("/bin/bash", ["-c", `${COMMAND} > /dev/null`], { stdio: "ignore" })
    base.push(performance.now() - start)
    const started = performance.now()
    spawnSync("/bin/bash", ["-c", `${COMMAND} > ${file}`], { stdio: "ignore" })
    toFile.push(performance.now() - started)
    rmSync(file, { force: true })
    const out = spawnSync(process.execPath, [import.meta.filename, "--child", COMMAND], { encoding: "utf8" })
    if (out.status !== 0) throw new Error(out.stderr)
    tool.push(JSON.parse(out.stdout))
    const quiet = spawnSync(process.execPath, [import.meta.filename, "--child", `${COMMAND} > /dev/null`], {
      encoding: "utf8"
    })
    devnull.push(JSON.parse(quiet.stdout).ms)
  }
  const budgetMB = defaultOutputSettings.storeBytes / 1024 / 1024
  const b = median(base)
  const t = median(tool.map((x) => x.ms))
  console.log("| what | runs | median | vs baseline |\n| --- | --- | --- | --- |")
  console.log(`| bash -c '${COMMAND} > /dev/null' (baseline, spawnSync) | ${runs} | ${fmt(b)} | — |`)
  console.log(
    `| bash -c '${COMMAND} > file' (keeping the bytes at all: the floor for any store) | ${runs} | ${fmt(median(toFile))} | ${(median(toFile) / b).toFixed(2)}× |`
  )
  console.log(
    `| node:child_process reading '${COMMAND}' from a pipe, discarding it (the floor for a Node reader) | ${runs} | ${fmt(median(plain))} | ${(median(plain) / b).toFixed(2)}× |`
  )
  console.log(
    `| bash tool: '${COMMAND} > /dev/null' (fixed cost of a call) | ${runs} | ${fmt(median(devnull))} | ${(median(devnull) / b).toFixed(2)}× |`
  )
  console.log(`| bash tool: '${COMMAND}' (200 MB captured) | ${runs} | ${fmt(t)} | ${(t / b).toFixed(2)}× |`)
  const rss = Math.max(...tool.map((x) => x.maxRssMB))
  const idle = JSON.parse(
    spawnSync(process.execPath, [import.meta.filename, "--child", "echo hi"], { encoding: "utf8" }).stdout
  ).maxRssMB as number
  console.log(
    `\npeak RSS of the process running the tool: ${rss.toFixed(0)} MB; the same process running \`echo hi\`: ${idle.toFixed(0)} MB; growth for 200 MB of output: ${(rss - idle).toFixed(0)} MB (target: ≤ the ${budgetMB} MiB store budget + 100 MB)`
  )
  console.log(`output: ${tool[0]!.outputChars} chars stored, ${tool[0]!.modelChars} chars in the model's copy`)
  // An installed freecode-tools runs the compiled build: no TypeScript loader in its memory.
  const distChild = join(import.meta.dirname, "bash-dist-child.mjs")
  if (!existsSync(join(import.meta.dirname, "..", "dist", "layers", "live.js"))) {
    console.log("(no dist/: run `npm run build` for the compiled build's figures)")
    return
  }
  const onDist = (command: string) =>
    JSON.parse(spawnSync(process.execPath, [distChild, command], { encoding: "utf8" }).stdout) as {
      ms: number
      maxRssMB: number
    }
  const big = Array.from({ length: runs }, () => onDist(COMMAND))
  const quiet = onDist("echo hi")
  const peak = Math.max(...big.map((x) => x.maxRssMB))
  console.log(
    `compiled build (dist/): 200 MB captured in ${fmt(median(big.map((x) => x.ms)))} (${(median(big.map((x) => x.ms)) / b).toFixed(2)}×); peak RSS ${peak.toFixed(0)} MB, \`echo hi\` ${quiet.maxRssMB.toFixed(0)} MB (target: ≤ ${(budgetMB + 100).toFixed(0)} MB)`
  )
}

if (process.argv[2] === "--child") await child(process.argv[3]!)
else await main()
