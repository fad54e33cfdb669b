/**
 * How long a control path a running sandboxed command made stays in the project before the host
 * moves it aside (made-control-watch.ts): one command makes `rN/.git/config` N times, each time
 * timing, from inside, how long until `rN/.git` is gone (polled every 5 ms). Median, 90th
 * percentile and the longest, in ms, with the load average.
 *   npx node bench/control-window.ts       (BENCH_WINDOW_N=20 by default)
 */
import { spawn } from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { Effect, Layer } from "effect"
import { Sandbox } from "../src/sandbox/sandbox.ts"
import { resolveSandboxSettings } from "../src/sandbox/settings.ts"

const n = Number(process.env.BENCH_WINDOW_N ?? 20)
const base = NodeFs.realpathSync(NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "freecode-bench-window-")))
const root = NodePath.join(base, "project")
const home = NodePath.join(base, "home")
for (const d of [root, home]) NodeFs.mkdirSync(d)
process.env.FREECODE_STATE_DIR = NodePath.join(base, "state")

const round = (i: number) =>
  [
    `mkdir -p r${i}/.git && echo '[core]' > r${i}/.git/config`,
    "t0=$(date +%s%N)",
    `for k in $(seq 2000); do [ -e r${i}/.git ] || break; sleep 0.005; done`,
    `echo WINDOW $(( ($(date +%s%N) - t0) / 1000 ))`
  ].join("; ")

const script = Array.from({ length: n }, (_, i) => round(i)).join("\n")

const output = await Effect.runPromise(
  Effect.gen(function* () {
    const sandbox = yield* Sandbox
    const line = yield* sandbox.wrap(["/bin/bash", "-c", script], { sessionId: "window", cwd: root, writable: [] })
    // Started without blocking the loop: the guard that moves the paths aside runs on it.
    const out = yield* Effect.promise(
      () =>
        new Promise<string>((resolve) => {
          const child = spawn(line[0]!, line.slice(1), { stdio: ["ignore", "pipe", "pipe"] })
          let text = ""
          child.stdout.on("data", (d) => (text += d))
          child.stderr.on("data", (d) => (text += d))
          child.on("close", () => resolve(text))
        })
    )
    yield* sandbox.audit!(line)
    return out
  }).pipe(
    Effect.provide(
      Layer.fresh(
        Sandbox.layer(resolveSandboxSettings({ enabled: true }, false), {
          root,
          home,
          registry: NodePath.join(base, "registry")
        })
      )
    ),
    Effect.scoped
  )
)
const windows = [...output.matchAll(/WINDOW (\d+)/g)].map((m) => Number(m[1]) / 1000).sort((a, b) => a - b)
const at = (q: number) => windows[Math.min(windows.length - 1, Math.floor(q * windows.length))]!
console.log(
  `control path made → moved aside, n=${windows.length}: median ${at(0.5).toFixed(0)} ms, 90th ${at(0.9).toFixed(0)} ms, longest ${windows.at(-1)?.toFixed(0)} ms (load ${NodeOs.loadavg()[0]!.toFixed(1)})`
)
NodeFs.rmSync(base, { recursive: true, force: true })
