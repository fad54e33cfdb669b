/**
 * Background jobs end to end, with real processes: a real HTTP server started in the background
 * and reached from a later bash call, its log read through the job, a program answering a line
 * written to its stdin, both stopped, and nothing left running — also when the host is SIGKILLed.
 */
import { execFileSync, spawn } from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { testToolSystem } from "../../layers/test.ts"
import { Orchestrator } from "../../src/orchestrator/orchestrator.ts"
import { BashTool } from "../../src/tools/bash.ts"
import { JobTool } from "../../src/tools/job.ts"

const MAIN = NodePath.resolve(import.meta.dirname, "../../src/cli/main.ts")

const pgrep = (pattern: string): string => {
  try {
    return execFileSync("pgrep", ["-af", pattern], { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim()
  } catch {
    return ""
  }
}

const gone = (pattern: string) =>
  Effect.gen(function* () {
    for (let i = 0; i < 50 && pgrep(pattern) !== ""; i++) yield* Effect.sleep("100 millis")
    return pgrep(pattern)
  })

const call = (name: string, args: Record<string, unknown>, id: string) =>
  Orchestrator.use((o) => o.execute({ id, name, args }, { sessionId: "s" }))

const root = NodeFs.realpathSync(NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "freecode-jobs-")))

describe("background jobs", () => {
  it.live("a server in the background, reached from a later call; a program fed on stdin; both stopped", () =>
    Effect.gen(function* () {
      const port = 20_000 + Math.floor(Math.random() * 30_000)
      const tag = `fcjob${process.pid}`
      NodeFs.writeFileSync(
        NodePath.join(root, "server.js"),
        `// ${tag}\nrequire("http").createServer((q, s) => { console.log("GET " + q.url); s.end("pong\\n") }).listen(${port}, "127.0.0.1", () => console.log("listening on ${port}"))\n`
      )
      const server = yield* call(
        "bash",
        { command: `exec node server.js ${tag}`, run_in_background: true, description: "dev server" },
        "b1"
      )
      expect(server.status, server.modelOutput).toBe("ok")
      expect(server.metadata?.jobId).toBe("job-1")
      let seen = server.modelOutput
      for (let i = 0; i < 50 && !seen.includes("listening"); i++) {
        yield* Effect.sleep("100 millis")
        seen += (yield* call("job", { id: "job-1" }, `j${i}`)).modelOutput
      }
      expect(seen).toContain(`listening on ${port}`)

      const curl = yield* call("bash", { command: `curl -s http://127.0.0.1:${port}/health` }, "b2")
      expect(curl.modelOutput).toContain("pong")
      const log = yield* call("job", { id: "job-1" }, "j-log")
      expect(log.modelOutput).toContain("GET /health")
      expect(log.modelOutput).toContain("job-1 running")

      const asker = yield* call(
        "bash",
        {
          command: `read -r name; echo "hello $name"; read -r again; echo "bye $again" # ${tag}`,
          run_in_background: true
        },
        "b3"
      )
      expect(asker.metadata?.jobId).toBe("job-2")
      const answer = yield* call("job", { id: "job-2", input: "world\n" }, "j-in")
      expect(answer.modelOutput).toContain("hello world")
      const closed = yield* call("job", { id: "job-2", eof: true }, "j-eof")
      for (let i = 0; i < 20 && !(yield* call("job", { id: "job-2" }, `j-w${i}`)).modelOutput.includes("exited"); i++)
        yield* Effect.sleep("100 millis")
      expect(closed.status).toBe("ok")

      const list = yield* call("job", {}, "j-list")
      expect(list.modelOutput).toContain("job-1 running")
      expect(list.modelOutput).toContain("job-2 exited with code 0")

      const stopped = yield* call("job", { id: "job-1", stop: true }, "j-stop")
      expect(stopped.modelOutput).toContain("job-1 stopped")
      expect(yield* gone(tag)).toBe("")
      const refused = yield* call("job", { id: "job-1", input: "x\n" }, "j-late")
      expect(refused.status).toBe("error")
      expect(refused.modelOutput).toContain("no longer reads input")
    }).pipe(Effect.provide(testToolSystem({ root, tools: [BashTool, JobTool] })))
  )

  // docs/bash.md: a program that insists on a terminal gets one from util-linux `script`, no package.
  it.live.skipIf(!NodeFs.existsSync("/usr/bin/script"))(
    "a program that needs a terminal runs under script(1), fed through the job's stdin",
    () =>
      Effect.gen(function* () {
        const command = `script -qefc 'tty; read -p "name? " n; echo "hi $n"' /dev/null`
        const started = yield* call("bash", { command, run_in_background: true }, "t1")
        expect(started.modelOutput).toMatch(/\/dev\/pts\//)
        let seen = (yield* call("job", { id: "job-1", input: "bob\n" }, "t2")).modelOutput
        for (let i = 0; i < 30 && !seen.includes("exited"); i++) {
          yield* Effect.sleep("100 millis")
          seen += (yield* call("job", { id: "job-1" }, `t3${i}`)).modelOutput
        }
        expect(seen).toContain("hi bob")
        expect(seen).toContain("exited with code 0")
      }).pipe(Effect.provide(testToolSystem({ root, tools: [BashTool, JobTool] })))
  )

  it.live("an unknown job id names the session's jobs and how to start one", () =>
    Effect.gen(function* () {
      const r = yield* call("job", { id: "job-9" }, "j")
      expect(r.status).toBe("error")
      expect(r.modelOutput).toContain("run_in_background")
    }).pipe(Effect.provide(testToolSystem({ root, tools: [BashTool, JobTool] })))
  )

  it.live(
    "the host killed with SIGKILL leaves no job behind",
    () =>
      Effect.promise(async () => {
        const tag = `${process.pid}${Date.now()}`.slice(-9)
        const host = spawn(process.execPath, [MAIN, "run", "--root", root, "--yes"], {
          stdio: ["pipe", "pipe", "ignore"]
        })
        const answered = new Promise<string>((resolve) =>
          host.stdout.once("data", (d: Buffer) => resolve(d.toString()))
        )
        host.stdin.write(
          `${JSON.stringify([{ id: "b", name: "bash", args: { command: `sleep 4${tag}; echo never`, run_in_background: true } }])}\n`
        )
        const first = await answered
        expect(first).toContain("job-1")
        expect(pgrep(`sleep 4${tag}`)).not.toBe("")
        host.kill("SIGKILL")
        let left = pgrep(`sleep 4${tag}`)
        for (let i = 0; i < 50 && left !== ""; i++) {
          await new Promise((r) => setTimeout(r, 100))
          left = pgrep(`sleep 4${tag}`)
        }
        expect(left).toBe("")
      }),
    120_000
  )
  // bash sources ~/.bashrc even for `-c` when its stdin is a socket and SHLVL is unset (sshd's
  // heuristic); a job's stdin is a socket pair under Node, so a slow or blocking rc file (a
  // version manager's lock) would stall or change every job.
  it.live("neither a call nor a job sources the person's ~/.bashrc", () =>
    Effect.gen(function* () {
      const home = NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "freecode-jobs-home-"))
      const marker = NodePath.join(home, "sourced")
      NodeFs.writeFileSync(NodePath.join(home, ".bashrc"), `echo rc >> ${marker}\n`)
      const saved = { HOME: process.env.HOME, SHLVL: process.env.SHLVL }
      process.env.HOME = home
      delete process.env.SHLVL
      try {
        const direct = yield* call("bash", { command: "echo direct" }, "rc1")
        expect(direct.modelOutput).toContain("direct")
        const job = yield* call("bash", { command: "echo job", run_in_background: true }, "rc2")
        expect(job.status, job.modelOutput).toBe("ok")
        let seen = job.modelOutput
        for (let i = 0; i < 50 && !seen.includes("exited"); i++) {
          yield* Effect.sleep("100 millis")
          seen = (yield* call("job", { id: String(job.metadata?.jobId) }, `rc-j${i}`)).modelOutput
        }
        expect(seen).toContain("exited")
        expect(NodeFs.existsSync(marker), "~/.bashrc was sourced").toBe(false)
      } finally {
        process.env.HOME = saved.HOME
        if (saved.SHLVL !== undefined) process.env.SHLVL = saved.SHLVL
      }
    }).pipe(Effect.provide(testToolSystem({ root, tools: [BashTool, JobTool] })))
  )
})
