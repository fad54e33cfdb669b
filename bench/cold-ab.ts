/**
 * A/B of two checkouts' Dispatcher in one process, with the caches cold: between calls a 16 MB
 * walk through memory and some unrelated JS evict the code and data of the call path, as the
 * client and the other processes do between an MCP server's calls. A server's calls run 2-3
 * times slower than the same calls in a hot loop, so a change that saves nothing hot can save
 * much there, and the reverse; and two server processes differ by 5-10% from JIT luck alone,
 * which one process running both checkouts in alternation rules out (an A/A run agrees to 1%).
 *
 *   git worktree add /tmp/base <commit> && ln -s "$PWD/node_modules" /tmp/base/node_modules
 *   BASE=/tmp/base node bench/cold-ab.ts [ls|read]
 *
 * Env: BASE (the other checkout, required), N (2000 calls each), THRASH_KB (16384; 0 for hot).
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { performance } from "node:perf_hooks"
import { Effect, ManagedRuntime } from "effect"

const tool = process.argv[2] === "read" ? "read" : "ls"
const base = process.env.BASE
if (base === undefined) throw new Error("BASE must name the other checkout (see the comment at the top)")
const N = Number(process.env.N ?? 2000)
const THRASH_KB = Number(process.env.THRASH_KB ?? 16384)

const root = mkdtempSync(join(tmpdir(), "bench-cold-ab-"))
const dir = join(root, "sub")
mkdirSync(dir)
const file = join(dir, "file.ts")
writeFileSync(file, "export const value = compute(alpha, beta) // a typical line of code\n".repeat(60))
for (let i = 0; i < 50; i++) writeFileSync(join(dir, `f${String(i).padStart(2, "0")}.txt`), `${i}\n`)
const args = tool === "ls" ? { path: dir } : { filePath: file }
process.env.FREECODE_READ_DEDUP = "0"

/** One checkout's Dispatcher, calling the tool. */
const load = async (checkout: string) => {
  // src/layers/ since the compositions moved into src/; layers/ in a checkout from before.
  const live = ["src/layers/live.ts", "layers/live.ts"].map((p) => join(resolve(checkout), p)).find(existsSync)
  const { ToolSystem } = await import(live ?? join(resolve(checkout), "src/layers/live.ts"))
  const { Dispatcher } = await import(join(resolve(checkout), "src/dispatch/dispatcher.ts"))
  const runtime = ManagedRuntime.make(ToolSystem.layer({ root }))
  // biome-ignore lint/suspicious/noExplicitAny: two checkouts' types need not agree
  const dispatcher: any = await runtime.runPromise(
    Effect.gen(function* () {
      return yield* Dispatcher
    })
  )
  let n = 0
  return {
    call: () => runtime.runPromise(dispatcher.dispatch({ id: `c${n++}`, name: tool, args }, { sessionId: "s" })),
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
  { name: `A ${base}`, ...(await load(base)), samples: [] as Array<number> },
  { name: "B this checkout", ...(await load(resolve(import.meta.dirname, ".."))), samples: [] as Array<number> }
]
try {
  // Calls on a directory written just now would not be served from the listing cache (stat-cache.ts).
  await new Promise((r) => setTimeout(r, 3200))
  for (let i = 0; i < 500; i++) for (const side of sides) await side.call()
  for (let i = 0; i < N; i++) {
    // Each goes first in turn.
    for (const side of i % 2 === 0 ? sides : [...sides].reverse()) {
      thrash()
      const start = performance.now()
      await side.call()
      side.samples.push(performance.now() - start)
    }
  }
  const at = (xs: Array<number>, q: number) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length * q)]! * 1000
  for (const side of sides) {
    console.log(
      `${side.name}: ${tool}, ${THRASH_KB > 0 ? "cold" : "hot"}, median ${at(side.samples, 0.5).toFixed(1)} µs (p25 ${at(side.samples, 0.25).toFixed(1)}, p75 ${at(side.samples, 0.75).toFixed(1)})`
    )
  }
} finally {
  for (const side of sides) await side.dispose()
  rmSync(root, { recursive: true, force: true })
}
