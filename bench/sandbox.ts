/**
 * What the OS sandbox adds to one bash call: the same command (`true`, redirected into a file as
 * bash does) started plainly and sandboxed, alternating, N times each. A sandboxed call is all
 * of its cost: asking the sandbox for the command line (the policy, the session's temp dir) and
 * starting it. Medians with the 10th–90th percentile spread; the first call (which finds whether
 * the sandbox runs here, and starts the proxy) is reported apart. Also CPU time a call (the
 * started processes', and the command line's own), which a loaded machine moves far less than
 * wall time. The sandboxed call is started as bash starts it: the line and the sandbox's
 * descriptors handed to spawn (launch.ts). A third column, alternating with the two, starts
 * `wrap`'s line instead, where a `/bin/sh` opens the descriptors (one process more).
 *   node bench/sandbox.ts            (BENCH_SANDBOX_N=100 by default)
 *   node bench/sandbox.ts network    with allowed domains (the proxy, and the bridge inside)
 */
import { spawnSync } from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { Effect, Layer } from "effect"
import { asCommandLine, type Descriptor, openDescriptors } from "../src/sandbox/launch.ts"
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
/**
 * The CPU time (ms) of this process's reaped children so far: /proc/self/stat's cutime and
 * cstime, in clock ticks (100 a second). Coarse per call, exact over many: unlike wall time it
 * hardly moves with the machine's load, so it says what a start costs when others are working.
 */
const childrenCpu = (): number => {
  const stat = NodeFs.readFileSync("/proc/self/stat", "utf8")
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
  return (Number(fields[13]) + Number(fields[14])) * 10
}
const cpu = { plain: 0, sandboxed: 0, shell: 0 }
const spawn = (line: CommandLine, kind: keyof typeof cpu, descriptors: ReadonlyArray<Descriptor> = []) => {
  const before = childrenCpu()
  const fds = openDescriptors(descriptors)
  const r = spawnSync(line[0], line.slice(1), { cwd: root, stdio: ["ignore", "ignore", "ignore", ...fds.extra] })
  fds.close()
  if (r.status !== 0) throw new Error(`${line[0]} exited ${r.status}`)
  cpu[kind] += childrenCpu() - before
}
const sandboxed = (sandbox: SandboxShape, kind: "sandboxed" | "shell") =>
  Effect.gen(function* () {
    const start = process.hrtime.bigint()
    const before = process.cpuUsage()
    const launch = yield* sandbox.launch!(plain, { sessionId: "bench", cwd: root, writable: [root] })
    if (launch.line === plain) throw new Error("the sandbox is not available here")
    const wrapped = ms(start)
    const used = process.cpuUsage(before)
    if (kind === "shell") spawn(asCommandLine(launch), kind)
    else spawn(launch.line, kind, launch.descriptors)
    // After the command, as bash does: the control paths' audit (control-guard.ts).
    const auditStart = process.hrtime.bigint()
    const auditBefore = process.cpuUsage()
    if (sandbox.audit !== undefined) yield* sandbox.audit(launch)
    const audited = process.cpuUsage(auditBefore)
    return {
      total: ms(start),
      wrap: wrapped,
      wrapCpu: (used.user + used.system) / 1000,
      audit: ms(auditStart),
      auditCpu: (audited.user + audited.system) / 1000
    }
  })
const at = (xs: Array<number>, q: number) =>
  [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) * q)] ?? Number.NaN
const summary = (xs: Array<number>) =>
  `${at(xs, 0.5).toFixed(1)} ms (${at(xs, 0.1).toFixed(1)}–${at(xs, 0.9).toFixed(1)})`

const a: Array<number> = []
const b: Array<number> = []
const c: Array<number> = []
const wraps: Array<number> = []
const wrapCpus: Array<number> = []
const audits: Array<number> = []
const auditCpus: Array<number> = []
let first = 0
await Effect.runPromise(
  Effect.gen(function* () {
    const sandbox = yield* Sandbox
    // The layer's folders live until the scope closes: measure inside it.
    first = (yield* sandboxed(sandbox, "sandboxed")).total
    cpu.sandboxed = 0
    for (let i = 0; i < n; i++) {
      const start = process.hrtime.bigint()
      spawn(plain, "plain")
      a.push(ms(start))
      const s = yield* sandboxed(sandbox, "sandboxed")
      b.push(s.total)
      wraps.push(s.wrap)
      wrapCpus.push(s.wrapCpu)
      audits.push(s.audit)
      auditCpus.push(s.auditCpu)
      c.push((yield* sandboxed(sandbox, "shell")).total)
    }
  }).pipe(Effect.provide(Layer.fresh(Sandbox.layer(settings, { root }))), Effect.scoped)
)
const added = b.map((x, i) => x - (a[i] ?? 0))
const addedShell = c.map((x, i) => x - (a[i] ?? 0))
console.log(
  `| sandbox${network ? " (allowed domains)" : ""} | plain ${summary(a)} | sandboxed ${summary(b)} | added ${summary(added)} | of which the command line ${at(wraps, 0.5).toFixed(2)} ms | CPU a call: plain ${(cpu.plain / n).toFixed(1)}, sandboxed ${(cpu.sandboxed / n).toFixed(1)} + command line ${at(wrapCpus, 0.5).toFixed(2)} ms | audit after: ${at(audits, 0.5).toFixed(2)} ms, CPU ${at(auditCpus, 0.5).toFixed(2)} ms | first call ${first.toFixed(1)} ms | through wrap's /bin/sh: added ${summary(addedShell)}, CPU ${(cpu.shell / n).toFixed(1)} ms | n=${n} | load ${NodeOs.loadavg()[0]?.toFixed(1)} |`
)
NodeFs.rmSync(root, { recursive: true, force: true })
