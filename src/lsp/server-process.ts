/**
 * A language server's process, owned by a Scope: spawned in its own process group (so an end also
 * reaches what a wrapper or the server itself started: tsserver under typescript-language-server),
 * and, when the scope closes, the whole group killed and waited for. node's spawn, as bash and
 * jobs start theirs, wrapped with acquireRelease: the server's stdout is a byte stream the JSON-RPC
 * reader (rpc.ts) takes as it comes.
 */
import { type ChildProcess, type ChildProcessByStdio, spawn } from "node:child_process"
import type { Readable, Writable } from "node:stream"
import { Deferred, Duration, Effect, Schedule, type Scope } from "effect"
import { headOf, tailOf } from "../text/cut.ts"
import type { ServerCommand } from "./servers.ts"

export interface ServerProcess {
  readonly pid: number
  readonly stdin: Writable
  readonly stdout: Readable
  /** Waits for the process to exit; then says why: "it exited (code 3): <its stderr's end>". */
  readonly exit: Effect.Effect<string>
  readonly hasExited: () => boolean
  /** Kills the group now (SIGKILL), without waiting: the server is lost and must not linger. */
  readonly kill: () => void
}

/** A child with all three pipes. */
type Server = ChildProcessByStdio<Writable, Readable, Readable>

/** How long the end waits for the group to go after the SIGKILL (not instant, but never long). */
const GONE_WITHIN = Duration.seconds(1)

const killGroup = (child: ChildProcess): void => {
  try {
    if (child.pid !== undefined) process.kill(-child.pid, "SIGKILL")
  } catch {
    child.kill("SIGKILL")
  }
}

/** True while some process of the group is there (signal 0 reaches it). */
const groupThere = (pgid: number): boolean => {
  try {
    process.kill(-pgid, 0)
    return true
  } catch {
    return false
  }
}

/** Polls until no process of the group is left, at most GONE_WITHIN. */
const awaitGroupGone = (pgid: number): Effect.Effect<void> =>
  Effect.sync(() => groupThere(pgid)).pipe(
    Effect.repeat({ schedule: Schedule.spaced(Duration.millis(10)), while: (there) => there }),
    Effect.timeoutOption(GONE_WITHIN),
    Effect.asVoid
  )

/**
 * Starts `command` in `root`; fails with why it could not (a missing program). Closing the scope
 * kills the group and waits for the leader's exit and the group's end.
 */
export const spawnServer = (command: ServerCommand, root: string): Effect.Effect<ServerProcess, string, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.callback<{ readonly child: Server; readonly exited: Deferred.Deferred<string> }, string>((resume) => {
      const exited = Deferred.makeUnsafe<string>()
      let child: Server
      try {
        child = spawn(command.command, [...command.args], {
          cwd: root,
          stdio: ["pipe", "pipe", "pipe"],
          detached: true
        })
      } catch (e) {
        // Arguments node refuses outright (a NUL byte in the program's name).
        return resume(Effect.fail(`it did not run (${e instanceof Error ? e.message : String(e)})`))
      }
      // Servers log to stderr; keep the tail (it explains a failed start) and never let the pipe fill.
      let stderrTail = ""
      child.stderr.on("data", (chunk: Buffer) => {
        stderrTail = tailOf(stderrTail + chunk.toString("utf8"), 2000)
      })
      // A write after the server died: the write's own callback reports it (rpc.ts).
      child.stdin.on("error", () => undefined)
      child.once("exit", (code, signal) => {
        const why = headOf(stderrTail.trim().split("\n").slice(-3).join(" "), 400)
        Deferred.doneUnsafe(
          exited,
          Effect.succeed(`it exited (${signal ?? `code ${code}`})${why === "" ? "" : `: ${why}`}`)
        )
      })
      child.once("error", (e) => resume(Effect.fail(`it did not run (${e.message})`)))
      child.once("spawn", () => resume(Effect.succeed({ child, exited })))
      // Interrupted before the spawn settled: nothing may stay behind.
      return Effect.sync(() => killGroup(child))
    }),
    ({ child, exited }) =>
      Effect.gen(function* () {
        // Also after a clean exit: what the server started itself is still in its group.
        killGroup(child)
        yield* Deferred.await(exited).pipe(Effect.timeoutOption(GONE_WITHIN))
        if (child.pid !== undefined) yield* awaitGroupGone(child.pid)
      })
  ).pipe(
    Effect.map(
      ({ child, exited }): ServerProcess => ({
        pid: child.pid!,
        stdin: child.stdin,
        stdout: child.stdout,
        exit: Deferred.await(exited),
        hasExited: () => Deferred.isDoneUnsafe(exited),
        kill: () => killGroup(child)
      })
    )
  )
