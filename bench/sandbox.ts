/**
 * What the OS sandbox adds to one bash call: the same command (`true`, redirected into a file as
 * bash does) started plain and inside bubblewrap, alternating, N times each; medians.
 *   node bench/sandbox.ts            (BENCH_SANDBOX_N=100 by default)
 *   node bench/sandbox.ts network    the same with a filtered network (proxy bridge inside)
 */
import { spawnSync } from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { Effect, Layer } from "effect"
import { type CommandLine, Sandbox } from "../src/sandbox/sandbox.ts"
import { resolveSandboxSettings } from "../src/sandbox/settings.ts"

const n = Number(process.env.BENCH_SANDBOX_N ?? 100)
const network = process.argv.includes("network")
const root = NodeFs.realpathSync(NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "freecode-bench-sbx-")))
const out = NodePath.join(root, "out")
const plain: CommandLine = ["/bin/bash", "-c", 'exec /bin/bash -c "$1" > "$2" 2>&1', "bash", "true", out]

const settings = resolveSandboxSettings(
  { enabled: true, ...(network ? { network: { allowedDomains: ["example.com"] } } : {}) },
  false
)
const once = (line: CommandLine): number => {
  const start = process.hrtime.bigint()
  const r = spawnSync(line[0], line.slice(1), { cwd: root, stdio: "ignore" })
  if (r.status !== 0) throw new Error(`exit ${r.status}`)
  return Number(process.hrtime.bigint() - start) / 1e6
}
const median = (xs: Array<number>) => xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? Number.NaN

const a: Array<number> = []
const b: Array<number> = []
await Effect.runPromise(
  Effect.gen(function* () {
    const sandbox = yield* Sandbox
    // The layer's folders live until the scope closes: measure inside it.
    const wrapped = yield* sandbox.wrap(plain, { sessionId: "bench", cwd: root, writable: [root] })
    if (wrapped === plain) throw new Error("the sandbox is not available here")
    for (let i = 0; i < n; i++) {
      a.push(once(plain))
      b.push(once(wrapped))
    }
  }).pipe(Effect.provide(Layer.fresh(Sandbox.layer(settings, { root }))), Effect.scoped)
)
const ma = median(a)
const mb = median(b)
console.log(
  `| sandbox start cost${network ? " (filtered network)" : ""} | plain ${ma.toFixed(1)} ms | bubblewrap ${mb.toFixed(1)} ms | +${(mb - ma).toFixed(1)} ms a call | n=${n} |`
)
NodeFs.rmSync(root, { recursive: true, force: true })
