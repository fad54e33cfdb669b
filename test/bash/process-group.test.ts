import { spawn } from "node:child_process"
import { readFileSync } from "node:fs"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { endGroup, groupRuns, spawnGroupLeader } from "../../src/tools/bash/process-group.ts"

const state = (pid: number): string | undefined => {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8")
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3)
  } catch {
    return undefined
  }
}

const waitFor = (check: () => boolean) =>
  Effect.gen(function* () {
    for (let i = 0; i < 1000 && !check(); i++) yield* Effect.sleep("10 millis")
    return check()
  })

describe.runIf(process.platform === "linux")("process groups", () => {
  it.live("a group whose only member is a zombie no one reaps does not count as running", () =>
    Effect.gen(function* () {
      // With job control on, `sleep 1 &` leads a group of its own; its parent has by then become
      // a `sleep 30` that never reaps it, so it stays a zombie (as an orphan does under a lazy init).
      const parent = spawn("/bin/bash", ["-c", "set -m; sleep 1 & echo $!; exec sleep 30"], {
        stdio: ["ignore", "pipe", "ignore"]
      })
      try {
        const zombie = yield* Effect.promise(
          () => new Promise<number>((resolve) => parent.stdout.once("data", (d) => resolve(Number(String(d).trim()))))
        )
        expect(yield* waitFor(() => state(zombie) === "Z")).toBe(true)
        // The kernel still counts it: a kill(-pgid, 0) check would wait on it for good.
        expect(() => process.kill(-zombie, 0)).not.toThrow()
        expect(groupRuns(zombie)).toBe(false)
        // And ending that group returns at once instead of waiting out the grace period.
        yield* endGroup(zombie)
        expect(state(zombie)).toBe("Z")
      } finally {
        parent.kill("SIGKILL")
      }
    })
  )

  it.live("a running member counts; ending the group kills it, SIGTERM ignored or not", () =>
    Effect.gen(function* () {
      const pid = yield* Effect.scoped(
        Effect.gen(function* () {
          const leader = yield* spawnGroupLeader("/bin/bash", ["-c", "trap '' TERM; sleep 30 & wait"], "/")
          expect(groupRuns(leader.pid)).toBe(true)
          return leader.pid
        })
      )
      // The scope's end sent SIGTERM, which the shell ignores, then SIGKILL.
      expect(groupRuns(pid)).toBe(false)
    })
  )

  it.live("a missing working directory fails the spawn, typed", () =>
    Effect.gen(function* () {
      const error = yield* Effect.flip(
        Effect.scoped(spawnGroupLeader("/bin/bash", ["-c", "true"], "/no/such/dir/anywhere"))
      )
      expect(error.message).toMatch(/ENOENT/)
    })
  )
})
