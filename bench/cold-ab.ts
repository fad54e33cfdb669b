/**
 * A/B of two checkouts' Dispatcher in one process, with the caches cold: between calls a 16 MB
 * walk through memory and some unrelated JS evict the code and data of the call path, as the
 * client and the other processes do between an MCP server's calls. A server's calls run 2-3
 * times slower than the same calls in a hot loop, so a change that saves nothing hot can save
 * much there, and the reverse; and two server processes differ by 5-10% from JIT luck alone,
 * which one process running both checkouts in alternation rules out (an A/A run agrees to 1%).
 *
 *   git worktree add /tmp/base <commit> && ln -s "$PWD/node_modules" /tmp/base/node_modules
 *   BASE=/tmp/base node bench/cold-ab.ts [ls|read|edit|write|apply_patch]
 *
 * Env: BASE (the other checkout, required), N (2000 calls each), WARM (500 warm-up calls each),
 * THRASH_KB (16384; 0 for hot), VIA (`dispatcher`, or `orchestrator` for the ungated route: no
 * rules, no hooks). `noop` is a tool that does nothing, registered on both sides: the path alone. Each side's wall time and CPU time (process.cpuUsage: every
 * thread) per call are printed; for the edit tools, whose fsyncs wait on a shared disk, the CPU
 * time is the figure to compare.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { performance } from "node:perf_hooks"
import { Effect, ManagedRuntime, Schema } from "effect"

const TOOLS = ["ls", "read", "edit", "write", "apply_patch", "noop"] as const
type BenchTool = (typeof TOOLS)[number]
const tool: BenchTool = TOOLS.find((t) => t === process.argv[2]) ?? "ls"
const base = process.env.BASE
if (base === undefined) throw new Error("BASE must name the other checkout (see the comment at the top)")
const N = Number(process.env.N ?? 2000)
const THRASH_KB = Number(process.env.THRASH_KB ?? 16384)
const WARM = Number(process.env.WARM ?? 500)
const VIA = process.env.VIA === "orchestrator" ? "orchestrator" : "dispatcher"

const root = mkdtempSync(join(tmpdir(), "bench-cold-ab-"))
const dir = join(root, "sub")
mkdirSync(dir)
const file = join(dir, "file.ts")
const LINE = "export const value = compute(alpha, beta) // a typical line of code\n"
writeFileSync(file, LINE.repeat(60))
for (let i = 0; i < 50; i++) writeFileSync(join(dir, `f${String(i).padStart(2, "0")}.txt`), `${i}\n`)
process.env.FREECODE_READ_DEDUP = "0"

/**
 * The arguments of a side's `n`th call. The edit tools change a file of their own (each side
 * one), back and forth, so every call really writes: line 30 of 60 flips between two words.
 */
const argsOf = (own: string, n: number): unknown => {
  const [from, to] = n % 2 === 0 ? ["alpha", "gamma"] : ["gamma", "alpha"]
  const line = (word: string) => `export const value = compute(${word}, beta) // line 30`
  switch (tool) {
    case "noop":
      return {}
    case "ls":
      return { path: dir }
    case "read":
      return { filePath: file }
    case "edit":
      return { filePath: own, oldString: line(from), newString: line(to) }
    case "write":
      return { filePath: own, content: `${LINE.repeat(29)}${line(to)}\n${LINE.repeat(30)}` }
    case "apply_patch":
      return {
        patchText: [
          "*** Begin Patch",
          `*** Update File: ${own}`,
          "@@",
          `-${line(from)}`,
          `+${line(to)}`,
          "*** End Patch"
        ].join("\n")
      }
  }
}

let sideCount = 0
/** One checkout's Dispatcher (or Orchestrator, VIA=orchestrator), calling the tool. */
const load = async (checkout: string) => {
  // The compositions live in a top-level layers/; a checkout from the time they sat in src/layers/ is compared too.
  const live = ["layers/live.ts", "src/layers/live.ts"].map((p) => join(resolve(checkout), p)).find(existsSync)
  const { ToolSystem } = await import(live ?? join(resolve(checkout), "layers/live.ts"))
  const { Dispatcher } = await import(join(resolve(checkout), "src/dispatch/dispatcher.ts"))
  const { Orchestrator } = await import(join(resolve(checkout), "src/orchestrator/orchestrator.ts"))
  const { builtinTools } = await import(join(resolve(checkout), "src/tools/index.ts"))
  const { defineTool } = await import(join(resolve(checkout), "src/tool/tool.ts"))
  const noop = defineTool({
    id: "noop",
    description: "Does nothing.",
    parameters: Schema.Struct({}),
    concurrencySafe: true,
    execute: () => Effect.succeed({ title: "noop", output: "" })
  })
  // acceptEdits: the edit tools run without a person to ask (the same rule on both sides).
  const runtime = ManagedRuntime.make(
    ToolSystem.layer({
      root,
      tools: [...builtinTools, noop],
      config: { permissions: { defaultMode: "acceptEdits" } }
    })
  )
  // biome-ignore lint/suspicious/noExplicitAny: two checkouts' types need not agree
  const dispatcher: any = await runtime.runPromise(
    Effect.gen(function* () {
      if (VIA === "dispatcher") return yield* Dispatcher
      const orchestrator = yield* Orchestrator
      return { dispatch: orchestrator.execute }
    })
  )
  // Each side's own file for the edit tools, read once first (a file is edited only once read).
  const own = join(dir, `own-${sideCount++}.ts`)
  writeFileSync(own, `${LINE.repeat(29)}export const value = compute(alpha, beta) // line 30\n${LINE.repeat(30)}`)
  await runtime.runPromise(
    dispatcher.dispatch({ id: "first", name: "read", args: { filePath: own } }, { sessionId: "s" })
  )
  let n = 0
  return {
    call: async () => {
      const i = n++
      const result: { status: string; modelOutput: string } = await runtime.runPromise(
        dispatcher.dispatch({ id: `c${i}`, name: tool, args: argsOf(own, i) }, { sessionId: "s" })
      )
      // A failed call would time the refusal, not the work.
      if (result.status !== "ok") throw new Error(`${tool} call ${i} failed: ${result.modelOutput}`)
      return result
    },
    dispose: () => runtime.dispose()
  }
}

const junk = new Float64Array(THRASH_KB * 128)
const objects = Array.from({ length: 200 }, (_, i) => ({ id: i, name: `n${i}`, tags: [i, i + 1], nested: { a: i } }))
const thrash = () => {
  for (let i = 0; i < junk.length; i += 8) junk[i]! += 1
  JSON.parse(JSON.stringify(objects))
}

const sides = [
  { name: `A ${base}`, ...(await load(base)), samples: [] as Array<number>, cpu: [] as Array<number> },
  {
    name: "B this checkout",
    ...(await load(resolve(import.meta.dirname, ".."))),
    samples: [] as Array<number>,
    cpu: [] as Array<number>
  }
]
try {
  // Calls on a directory written just now would not be served from the listing cache (stat-cache.ts).
  await new Promise((r) => setTimeout(r, 3200))
  for (let i = 0; i < WARM; i++) for (const side of sides) await side.call()
  for (let i = 0; i < N; i++) {
    // Each goes first in turn.
    for (const side of i % 2 === 0 ? sides : [...sides].reverse()) {
      thrash()
      const cpu = process.cpuUsage()
      const start = performance.now()
      await side.call()
      side.samples.push(performance.now() - start)
      // The process's CPU (every thread: the pool's fsyncs too), which a busy disk's waits do not move.
      const used = process.cpuUsage(cpu)
      side.cpu.push((used.user + used.system) / 1000)
    }
  }
  const at = (xs: Array<number>, q: number) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length * q)]! * 1000
  for (const side of sides) {
    console.log(
      `${side.name}: ${tool}, ${THRASH_KB > 0 ? "cold" : "hot"}, median ${at(side.samples, 0.5).toFixed(1)} µs (p25 ${at(side.samples, 0.25).toFixed(1)}, p75 ${at(side.samples, 0.75).toFixed(1)}); CPU median ${at(side.cpu, 0.5).toFixed(1)} µs (p25 ${at(side.cpu, 0.25).toFixed(1)}, p75 ${at(side.cpu, 0.75).toFixed(1)})`
    )
  }
} finally {
  for (const side of sides) await side.dispose()
  rmSync(root, { recursive: true, force: true })
}
