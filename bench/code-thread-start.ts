/**
 * What a fresh interpreter thread's start costs, by part, and whether handing new threads a
 * WebAssembly.Module compiled once (workerData carries a Module to a thread of the same process)
 * pays: the CPU of the whole process (every thread) from `new Worker` until the thread has run
 * `1+1` in a fresh QuickJS runtime, for
 *   bare      a worker that only answers (Node's own worker start)
 *   require   + loading quickjs-emscripten-core and the variant's emscripten module
 *   own       + the interpreter loaded as thread.ts does it: the thread compiles the WebAssembly
 *   shared    the same, given a Module the host compiled once (not counted per thread)
 * in alternating rounds, medians.
 *   node bench/code-thread-start.ts [rounds]
 */
import { readFileSync } from "node:fs"
import { createRequire } from "node:module"
import { cpus, loadavg } from "node:os"
import { Worker } from "node:worker_threads"

const require = createRequire(import.meta.url)
const core = require.resolve("quickjs-emscripten-core")
const variant = require.resolve("@jitl/quickjs-wasmfile-release-sync")
const emscripten = require.resolve("@jitl/quickjs-wasmfile-release-sync/emscripten-module")
const wasm = emscripten.replace(/\.cjs$/, ".wasm")

const ANSWER = `require("node:worker_threads").parentPort.postMessage(0)`
const REQUIRE = `require(${JSON.stringify(core)}); require(${JSON.stringify(emscripten)}); ${ANSWER}`
const LOAD = `
const { parentPort, workerData } = require("node:worker_threads");
const core = require(workerData.core);
const base = require(workerData.variant);
const v = workerData.wasmModule === undefined ? (base.default ?? base) : core.newVariant(base.default ?? base, { wasmModule: workerData.wasmModule });
core.newQuickJSWASMModuleFromVariant(v).then((Q) => {
  const rt = Q.newRuntime(); const vm = rt.newContext(); vm.evalCode("1+1").value.dispose(); vm.dispose(); rt.dispose();
  parentPort.postMessage(0);
});`

const cpu = () => {
  const u = process.cpuUsage()
  return (u.user + u.system) / 1000
}

/** CPU and wall ms from `new Worker` to its first message; the thread is then ended. */
const start = (source: string, data: Record<string, unknown> = {}) =>
  new Promise<{ cpu: number; wall: number }>((resolve, reject) => {
    const [t, c] = [performance.now(), cpu()]
    const w = new Worker(source, {
      eval: true,
      workerData: data,
      resourceLimits: { maxOldGenerationSizeMb: 64, stackSizeMb: 4 }
    })
    w.once("error", reject)
    w.once("message", () => {
      const r = { cpu: cpu() - c, wall: performance.now() - t }
      void w.terminate().then(() => resolve(r))
    })
  })

const median = (xs: ReadonlyArray<number>) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!

const rounds = Number(process.argv[2] ?? 11)
console.log(
  `load average ${loadavg()
    .map((l) => l.toFixed(1))
    .join(" ")}, ${cpus().length} cores, ${rounds} rounds`
)
// The project's lib settings declare no WebAssembly (ES2024, no DOM); Node has it.
const { WebAssembly: Wasm } = globalThis as unknown as { WebAssembly: { compile: (b: Uint8Array) => Promise<object> } }
const c0 = cpu()
const compiled = await Wasm.compile(readFileSync(wasm))
console.log(`the host's one compile of the interpreter: ${(cpu() - c0).toFixed(1)} ms CPU`)
const kinds = {
  bare: () => start(ANSWER),
  require: () => start(REQUIRE),
  own: () => start(LOAD, { core, variant }),
  shared: () => start(LOAD, { core, variant, wasmModule: compiled })
}
const seen: Record<string, Array<{ cpu: number; wall: number }>> = {}
for (let i = 0; i < rounds; i++) {
  for (const [k, run] of Object.entries(kinds)) {
    const r = await run()
    seen[k] = [...(seen[k] ?? []), r]
  }
}
for (const [k, rs] of Object.entries(seen)) {
  console.log(
    `${k.padEnd(8)} CPU median ${median(rs.map((r) => r.cpu)).toFixed(1)} ms, wall median ${median(rs.map((r) => r.wall)).toFixed(1)} ms`
  )
}
