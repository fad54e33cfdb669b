/**
 * Processes that leave the command's group, where there is no PID namespace (the sandbox off):
 * `setsid -f`, a double fork into a new session, `nohup … &` — all end with the call, found by
 * the mark they inherit. And a tool-layer process killed -9 in the middle of a command takes
 * the command's processes with it (the watchdog).
 */
import { spawn } from "node:child_process"
import { readdirSync, readFileSync } from "node:fs"
import * as NodePath from "node:path"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { spawnGroupLeader } from "../../src/tools/bash/process-group.ts"

const CHILD = fileURLToPath(new URL("../fixtures/bash/group-child.ts", import.meta.url))

/** Pids whose command line is exactly `sleep <seconds>`. */
const sleeping = (seconds: string): ReadonlyArray<number> =>
  readdirSync("/proc")
    .filter((n) => /^\d+$/.test(n))
    .filter((n) => {
      try {
        const stat = readFileSync(`/proc/${n}/stat`, "latin1")
        if (stat.slice(stat.lastIndexOf(")") + 2).startsWith("Z")) return false
        return readFileSync(`/proc/${n}/cmdline`, "latin1") === `sleep\0${seconds}\0`
      } catch {
        return false
      }
    })
    .map(Number)

const until = (check: () => boolean, ms = 10_000) =>
  Effect.gen(function* () {
    const deadline = Date.now() + ms
    while (!check() && Date.now() < deadline) yield* Effect.sleep("20 millis")
    return check()
  })

/** Distinct durations per run, so a leftover of an earlier run is never counted. */
const base = 900_000 + (process.pid % 50_000) * 2

describe.runIf(process.platform === "linux")("processes that leave the command's group", () => {
  it.live("setsid -f, a double fork into a new session and nohup & end with the call", () =>
    Effect.gen(function* () {
      const [a, b, c] = [`${base}1`, `${base}2`, `${base}3`]
      const command = [
        `setsid -f sleep ${a}`,
        `( setsid sh -c 'sleep ${b} & exit 0' & )`,
        `nohup sleep ${c} >/dev/null 2>&1 &`,
        `sleep 0.3`
      ].join("\n")
      yield* Effect.scoped(
        Effect.gen(function* () {
          const leader = yield* spawnGroupLeader("/bin/bash", ["-c", command], "/")
          expect(yield* leader.exit).toEqual({ code: 0, signal: null })
          // They were running when the command ended: the test would catch them.
          expect(sleeping(a).length + sleeping(b).length).toBe(2)
        })
      )
      expect(yield* until(() => [a, b, c].every((s) => sleeping(s).length === 0))).toBe(true)
    })
  )

  it.live(
    "a tool-layer process killed -9 in the middle of a command leaves no process of it behind",
    () =>
      Effect.gen(function* () {
        const [a, b] = [`${base}4`, `${base}5`]
        const child = spawn(process.execPath, [CHILD, `setsid -f sleep ${b}; sleep ${a}`], {
          cwd: NodePath.dirname(CHILD),
          stdio: ["ignore", "pipe", "inherit"]
        })
        yield* Effect.promise(
          () =>
            new Promise<void>((resolve) => child.stdout!.on("data", (d) => String(d).includes("started") && resolve()))
        )
        expect(yield* until(() => sleeping(a).length === 1 && sleeping(b).length === 1)).toBe(true)
        child.kill("SIGKILL")
        expect(yield* until(() => sleeping(a).length === 0 && sleeping(b).length === 0)).toBe(true)
      }),
    30_000
  )
})
