/**
 * A command run as the leader of its own process group, and the group's end: SIGTERM to every
 * member, SIGKILL to any still running after a grace period.
 *
 * "Still running" is decided by what runs, not by what exists. A background child (`sleep 100 &`)
 * outlives its shell, is re-parented to init, and after our SIGTERM stays a zombie until init
 * reaps it — which a container's init may do a second later, or never. A zombie still counts for
 * `kill(-pgid, 0)`, so waiting on that (as a generic spawner does) held every such call for up to
 * the whole grace period. On Linux the members are read from /proc and zombies do not count.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { readdirSync, readFileSync } from "node:fs"
import { constants } from "node:os"
import { Deferred, Duration, Effect, type Scope } from "effect"
import { type Descriptor, openDescriptors } from "../../sandbox/launch.ts"
import { killMarked, MARK_NAME, newMark, watch } from "./call-mark.ts"

/** How the shell ended: its code, or the signal that killed it. */
export interface ShellExit {
  readonly code: number | null
  readonly signal: NodeJS.Signals | null
}

export interface GroupLeader {
  readonly pid: number
  /** Waits for the leader (the shell) to exit. */
  readonly exit: Effect.Effect<ShellExit>
}

/** How long SIGTERM has before SIGKILL, and how long SIGKILL has to take effect. */
const TERM_GRACE_MS = 2_000
const KILL_GRACE_MS = 1_000
const POLL_MS = 10

const hasProc = (() => {
  try {
    readFileSync("/proc/self/stat")
    return true
  } catch {
    return false
  }
})()

/** True when some member of the group is running (a zombie is not). */
export const groupRuns = (pgid: number): boolean => {
  try {
    process.kill(-pgid, 0)
  } catch (e) {
    // ESRCH: no member at all. EPERM: only zombies are left (macOS answers so).
    return (e as NodeJS.ErrnoException).code !== "ESRCH" && (e as NodeJS.ErrnoException).code !== "EPERM"
  }
  if (!hasProc) return true
  for (const name of readdirSync("/proc")) {
    const c = name.charCodeAt(0)
    if (c < 48 || c > 57) continue
    let stat: string
    try {
      stat = readFileSync(`/proc/${name}/stat`, "latin1")
    } catch {
      continue // gone meanwhile
    }
    // "pid (comm) state ppid pgrp …"; comm may hold spaces and parentheses, so from the last ")".
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ", 3)
    if (Number(fields[2]) === pgid && fields[0] !== "Z" && fields[0] !== "X") return true
  }
  return false
}

const signalGroup = (pgid: number, signal: NodeJS.Signals) => {
  try {
    process.kill(-pgid, signal)
  } catch {
    // Nothing left to signal.
  }
}

/** Polls until no member of the group runs, or `ms` have passed. */
const awaitGroupEnd = Effect.fnUntraced(function* (pgid: number, ms: number) {
  const deadline = Date.now() + ms
  while (groupRuns(pgid) && Date.now() < deadline) yield* Effect.sleep(Duration.millis(POLL_MS))
})

/** Ends every process of the group: SIGTERM, then SIGKILL for what ignores it. */
export const endGroup = Effect.fnUntraced(function* (pgid: number): Effect.fn.Return<void> {
  if (!groupRuns(pgid)) return
  signalGroup(pgid, "SIGTERM")
  yield* awaitGroupEnd(pgid, TERM_GRACE_MS)
  if (!groupRuns(pgid)) return
  signalGroup(pgid, "SIGKILL")
  yield* awaitGroupEnd(pgid, KILL_GRACE_MS)
})

/** The exit code a shell reports for a command killed by `signal` (128 + its number). */
export const signalExitCode = (signal: NodeJS.Signals): number => 128 + (constants.signals[signal] ?? 0)

/**
 * Spawns `file args` as a group leader with stdio ignored and `descriptors` open from fd 3 up (the
 * sandbox's, launch.ts); closing the scope ends the group (every member, the leader's orphans
 * included), then every process that left the group but carries the call's mark; if this process
 * dies first, the watchdog does it (call-mark.ts). Fails with the spawn error (a missing cwd) or
 * the error opening a descriptor's file.
 */
export const spawnGroupLeader = (
  file: string,
  args: ReadonlyArray<string>,
  cwd: string,
  descriptors: ReadonlyArray<Descriptor> = []
): Effect.Effect<GroupLeader, Error, Scope.Scope> => {
  // The mark its descendants inherit, so those that leave the group end with it too (call-mark.ts).
  const mark = newMark()
  let unwatch = () => {}
  return Effect.acquireRelease(
    Effect.callback<{ readonly child: ChildProcess; readonly exited: Deferred.Deferred<ShellExit> }, Error>(
      (resume) => {
        const exited = Deferred.makeUnsafe<ShellExit>()
        let fds: ReturnType<typeof openDescriptors>
        try {
          fds = openDescriptors(descriptors)
        } catch (e) {
          resume(Effect.fail(e instanceof Error ? e : new Error(String(e))))
          return
        }
        let child: ChildProcess
        try {
          child = spawn(file, args, {
            cwd,
            detached: true,
            stdio: ["ignore", "ignore", "ignore", ...fds.extra],
            env: { ...process.env, [MARK_NAME]: mark }
          })
        } finally {
          fds.close() // the child has its own copies once spawn returned
        }
        child.once("exit", (code, signal) => Deferred.doneUnsafe(exited, Effect.succeed({ code, signal })))
        child.once("error", (e) => resume(Effect.fail(e)))
        child.once("spawn", () => {
          if (child.pid !== undefined) unwatch = watch(child.pid, mark)
          resume(Effect.succeed({ child, exited }))
        })
      }
    ),
    ({ child }) =>
      child.pid === undefined
        ? Effect.void
        : endGroup(child.pid).pipe(
            Effect.andThen(
              Effect.sync(() => {
                unwatch()
                killMarked(mark)
              })
            )
          )
  ).pipe(Effect.map(({ child, exited }) => ({ pid: child.pid!, exit: Deferred.await(exited) })))
}
