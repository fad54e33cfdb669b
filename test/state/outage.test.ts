/**
 * PostgreSQL stopped under a running replica: what needs the store fails closed and says so,
 * what does not keeps working, and everything works again when it is back — without restarting
 * the replica (its lease outlives the outage: nobody else fenced it).
 */
import * as NodeFs from "node:fs"
import { Context, Effect, Exit, Layer } from "effect"
import { afterAll, beforeAll, expect, it } from "vitest"
import { testToolSystem } from "../../layers/test.ts"
import { Dispatcher } from "../../src/dispatch/dispatcher.ts"
import { GrantStore } from "../../src/session/grants.ts"
import { TodoStore } from "../../src/session/todos.ts"
import { type PgCluster, removePostgres, startPostgres } from "../support/postgres.ts"

let pg: PgCluster
beforeAll(async () => {
  pg = await startPostgres()
}, 120_000)
afterAll(() => removePostgres(pg))

it("a stopped database: grants fail closed, todos fail naming the store, reads still work; all back when it is", async () => {
  const root = NodeFs.realpathSync(NodeFs.mkdtempSync(`${process.env.TMPDIR ?? "/tmp"}/freecode-outage-`))
  NodeFs.writeFileSync(`${root}/a.txt`, "hello\n")
  await Effect.runPromise(
    Effect.gen(function* () {
      const system = yield* Layer.build(testToolSystem({ root, store: { store: pg.url, leaseMs: 1_000 } }))
      const grants = Context.get(system as unknown as Context.Context<GrantStore>, GrantStore)
      const todos = Context.get(system, TodoStore)
      const dispatcher = Context.get(system, Dispatcher)
      yield* grants.add("s", "k", "k")
      expect(yield* grants.has("s", "k")).toBe(true)
      // Granted, never checked here: a check of it must reach the database.
      yield* grants.add("s", "k2", "k2")

      pg.stop()
      expect(yield* grants.has("s", "k2")).toBe(false)
      const failed = yield* Effect.exit(todos.set("s", [{ id: "1", content: "x", status: "pending" }]))
      expect(Exit.isFailure(failed)).toBe(true)
      expect(String(failed)).toMatch(/shared state store failed while saving the todo list/)
      const read = yield* dispatcher.dispatch(
        { id: "r1", name: "read", args: { filePath: "a.txt" } },
        { sessionId: "s" }
      )
      expect(read.status).toBe("ok")
      // Longer than the lease: nobody fenced this replica, so it is still the owner after.
      yield* Effect.sleep(2_000)

      pg.start()
      let back = false
      for (let i = 0; i < 100 && !back; i++) {
        back = yield* grants.has("s", "k2")
        if (!back) yield* Effect.sleep(100)
      }
      expect(back).toBe(true)
      yield* todos.set("s", [{ id: "1", content: "x", status: "pending" }])
      expect(yield* todos.get("s")).toEqual([{ id: "1", content: "x", status: "pending" }])
    }).pipe(Effect.scoped)
  )
}, 90_000)
