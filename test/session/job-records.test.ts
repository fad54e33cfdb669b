/**
 * Background jobs' records in the session database: two tool systems in one process share a
 * session (the first released before the second is built), and a row this version cannot read
 * is reported, not a crash.
 */
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { afterAll, describe, expect, it } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import { testToolSystem } from "../../layers/test.ts"
import { Orchestrator } from "../../src/orchestrator/orchestrator.ts"
import { JobRecordStore } from "../../src/session/job-records.ts"
import { SessionStore } from "../../src/session/store.ts"
import { BashTool } from "../../src/tools/bash.ts"
import { JobTool } from "../../src/tools/job.ts"
import { makeStateDir, openStore } from "./helpers.ts"

const state = makeStateDir()
const root = NodeFs.realpathSync(NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "freecode-job-records-")))
afterAll(() => {
  state.cleanup()
  NodeFs.rmSync(root, { recursive: true, force: true })
})

/** One tool system over the session database, for as long as `body` runs. */
const withSystem = <A>(body: (context: Context.Context<Orchestrator>) => Effect.Effect<A>) =>
  Effect.scoped(
    Effect.gen(function* () {
      const context = yield* Layer.build(
        testToolSystem({ root, sessions: { stateDir: state.dir }, tools: [BashTool, JobTool] })
      )
      return yield* body(context)
    })
  )

const call = (context: Context.Context<Orchestrator>, name: string, args: Record<string, unknown>) =>
  Context.get(context, Orchestrator).execute({ id: `c${Math.random()}`, name, args }, { sessionId: "twice" })

describe("job records", () => {
  it.live("a job of a released tool system is reported as ended to the next one in the same process", () =>
    Effect.gen(function* () {
      yield* withSystem((context) =>
        Effect.gen(function* () {
          const started = yield* call(context, "bash", { command: "sleep 311", run_in_background: true })
          expect(started.metadata?.jobId).toBe("job-1")
          // A job of this very system is never reported as ended.
          expect((yield* call(context, "job", {})).modelOutput).not.toContain("ended")
        })
      )
      yield* withSystem((context) =>
        Effect.gen(function* () {
          const list = yield* call(context, "job", {})
          expect(list.modelOutput).toContain(
            "job-1 ended with the process that ran it · last seen stopped: the tool system shut down"
          )
          const next = yield* call(context, "bash", { command: "echo again", run_in_background: true })
          expect(next.metadata?.jobId).toBe("job-2")
          expect(next.modelOutput).toContain("job-1 ended")
        })
      )
    })
  )

  it.live("a row whose state cannot be read is listed with a state that says so", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const store = yield* openStore({ root, stateDir: state.dir })
        const records = Context.get(
          yield* Layer.build(JobRecordStore.layerSqlite.pipe(Layer.provide(Layer.succeed(SessionStore, store)))),
          JobRecordStore
        )
        yield* records.put({
          sessionId: "odd",
          id: "job-1",
          command: "x",
          startedAt: 1,
          hostPid: 1,
          hostToken: "t",
          state: { state: "exited", code: 3 },
          bytes: 10
        })
        expect((yield* records.list("odd"))[0]?.state).toEqual({ state: "exited", code: 3 })
        yield* store.write((db) =>
          db.prepare("UPDATE jobs SET state = ? WHERE session_id = 'odd'").run('{"state":"new"}')
        )
        expect((yield* records.list("odd"))[0]?.state).toMatchObject({
          state: "killed",
          why: "its recorded state could not be read"
        })
      })
    ).pipe(Effect.orDie)
  )
})
