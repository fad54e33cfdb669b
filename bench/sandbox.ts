/**
 * What the OS sandbox adds to one bash call: the same command (`true`, redirected into a file as
 * bash does) started plainly and sandboxed, alternating, N times each. A sandboxed call is all
 * of its cost: asking the sandbox for the command line (the policy, the session's temp dir) and
 * starting it. Medians with the 10th–90th percentile spread; the first call (which finds whether
 * the sandbox runs here, and starts the proxy) is reported apart.
 *   node bench/sandbox.ts            (BENCH_SANDBOX_N=100 by default)
 *   node bench/sandbox.ts network    with allowed domains (the proxy, and the bridge inside)
 */
import { spawnSync } from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { Effect, Layer } from "effect"
import { type CommandLine, Sandbox, type SandboxShape } from "../src/sandbox/sandbox.ts"
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
const ms = (start: bigint) => Number(process.hrtime.bigint() - start) / 1e6
const spawn = (line: CommandLine) => {
  const r = spawnSync(line[0], line.slice(1), { cwd: root, stdio: "ignore" })
  if (r.status !== 0) throw new Error(`${line[0]} exited ${r.status}`)
}
const sandboxed = (sandbox: SandboxShape) =>
  Effect.gen(function* () {
    const start = process.hrtime.bigint()
    const line = yield* sandbox.wrap(plain, { sessionId: "bench", cwd: root, writable: [root] })
    if (line === plain) throw new Error("the sandbox is not available here")
    const wrapped = ms(start)
    spawn(line)
    return { total: ms(start), wrap: wrapped }
  })
const at = (xs: Array<number>, q: number) =>
  [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) * q)] ?? Number.NaN
const summary = (xs: Array<number>) =>
  `${at(xs, 0.5).toFixed(1)} ms (${at(xs, 0.1).toFixed(1)}–${at(xs, 0.9).toFixed(1)})`

const a: Array<number> = []
const b: Array<number> = []
const wraps: Array<number> = []
let first = 0
await Effect.runPromise(
  Effect.gen(function* () {
    const sandbox = yield* Sandbox
    // The layer's folders live until the scope closes: measure inside it.
    first = (yield* sandboxed(sandbox)).total
    for (let i = 0; i < n; i++) {
      const start = process.hrtime.bigint()
      spawn(plain)
      a.push(ms(start))
      const s = yield* sandboxed(sandbox)
      b.push(s.total)
      wraps.push(s.wrap)
    }
  }).pipe(Effect.provide(Layer.fresh(Sandbox.layer(settings, { root }))), Effect.scoped)
)
const added = b.map((x, i) => x - (a[i] ?? 0))
console.log(
  `| sandbox${network ? " (allowed domains)" : ""} | plain ${summary(a)} | sandboxed ${summary(b)} | added ${summary(added)} | of which the command line ${at(wraps, 0.5).toFixed(2)} ms | first call ${first.toFixed(1)} ms | n=${n} | load ${NodeOs.loadavg()[0]?.toFixed(1)} |`
)
NodeFs.rmSync(root, { recursive: true, force: true })
