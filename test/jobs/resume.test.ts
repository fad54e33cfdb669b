/**
 * `--session ID` resume across real CLI processes: jobs never outlive the process that ran them,
 * and the next process of the session says which ended, with their ids and last state — one
 * whose host exited (stopped at shutdown) and one whose host was SIGKILLed (last seen running).
 */
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { createInterface } from "node:readline"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"

const MAIN = NodePath.resolve(import.meta.dirname, "../../src/cli/main.ts")
const temp = (name: string) => NodeFs.realpathSync(NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), name)))
const root = temp("freecode-jobs-resume-")
const stateDir = temp("freecode-jobs-state-")

interface Result {
  readonly id: string
  readonly status: string
  readonly modelOutput: string
}

/** A `run --session` process: send it a turn, read one result per call. */
const host = () => {
  const child: ChildProcessWithoutNullStreams = spawn(
    process.execPath,
    [MAIN, "run", "--root", root, "--session", "resumed", "--yes"],
    { env: { ...process.env, FREECODE_STATE_DIR: stateDir }, stdio: ["pipe", "pipe", "pipe"] }
  )
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]()
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()))
  return {
    child,
    exited,
    turn: async (calls: ReadonlyArray<{ id: string; name: string; args: unknown }>): Promise<Array<Result>> => {
      child.stdin.write(`${JSON.stringify(calls)}\n`)
      const out: Array<Result> = []
      for (const _ of calls) {
        const next = await lines.next()
        if (next.done === true) throw new Error("the host ended before answering")
        out.push(JSON.parse(next.value) as Result)
      }
      return out
    }
  }
}

const background = (id: string, command: string) => ({
  id,
  name: "bash",
  args: { command, run_in_background: true }
})

describe("--session resume and background jobs", () => {
  it.live(
    "a resumed session names the jobs that ended with its earlier processes, and never reuses their ids",
    () =>
      Effect.promise(async () => {
        // First process: a job, then a normal end (stdin closed), which stops it.
        const first = host()
        const [a] = await first.turn([background("a", "sleep 301")])
        expect(a?.modelOutput).toContain("job-1 running")
        first.child.stdin.end()
        await first.exited

        // Second process: its first job is job-2, and it learns job-1 is gone; then it is SIGKILLed.
        const second = host()
        const [b] = await second.turn([background("b", "sleep 302")])
        expect(b?.modelOutput).toContain("job-2 running")
        expect(b?.modelOutput).toContain("job-1 ended with the process that ran it")
        expect(b?.modelOutput).toContain("stopped: the tool system shut down")
        second.child.kill("SIGKILL")
        await second.exited

        // Third process: both are listed as ended, with their last state; following one says so.
        const third = host()
        const [list, follow, stop] = await third.turn([
          { id: "l", name: "job", args: {} },
          { id: "f", name: "job", args: { id: "job-2" } },
          { id: "s", name: "job", args: { id: "job-1", stop: true } }
        ])
        expect(list?.status).toBe("ok")
        expect(list?.modelOutput).toMatch(
          /job-1 ended with the process that ran it · last seen stopped: the tool system shut down .*"sleep 301"/
        )
        expect(list?.modelOutput).toMatch(/job-2 ended with the process that ran it · last seen running .*"sleep 302"/)
        expect(follow?.status).toBe("error")
        expect(follow?.modelOutput).toContain("its output is gone")
        expect(follow?.modelOutput).toContain('"run_in_background": true')
        expect(stop?.status).toBe("ok")
        expect(stop?.modelOutput).toContain("job-1 ended")
        const [c] = await third.turn([background("c", "sleep 303")])
        expect(c?.modelOutput).toContain("job-3 running")
        third.child.stdin.end()
        await third.exited
      }),
    120_000
  )
})
