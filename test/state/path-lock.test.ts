/**
 * The per-path lock every replica sees: two real connections to one PostgreSQL (as two replicas
 * hold), the second waiting in the database until the first commits; and the in-process variant
 * for node:sqlite.
 */
import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Context, Deferred, Effect, Exit, Fiber, Layer } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { parseStore, storeLayer } from "../../src/sql/connect.ts"
import { makePathLock, type WithPathLock } from "../../src/state/path-lock.ts"
import { type PgCluster, removePostgres, startPostgres } from "../support/postgres.ts"

let pg: PgCluster
beforeAll(async () => {
  pg = await startPostgres()
}, 120_000)
afterAll(() => removePostgres(pg))

/** A replica's connection pool, and its lock for `workspace`. */
const replica = (workspace = "/srv/project") =>
  Effect.gen(function* () {
    const context = yield* Layer.build(storeLayer(parseStore(pg.url)))
    const sql = Context.get(context, SqlClient.SqlClient)
    const lock = yield* Effect.provideService(makePathLock(workspace), SqlClient.SqlClient, sql)
    return { sql, lock }
  })

/** Waits (bounded) until `n` advisory lock requests are waiting in the database. */
const waitingInDatabase = (sql: SqlClient.SqlClient, n: number) =>
  Effect.gen(function* () {
    for (let i = 0; i < 300; i++) {
      const rows = yield* sql<{ n: string }>`SELECT count(*)::text AS n FROM pg_locks
        WHERE locktype = 'advisory' AND NOT granted`
      if (Number(rows[0]!.n) === n) return
      yield* Effect.sleep(20)
    }
    throw new Error(`never saw ${n} waiting advisory lock(s)`)
  })

/** Holds `path`'s lock through `lock` until `release` is done, telling `held` once inside. */
const holder = (lock: WithPathLock, path: string, log: Array<string>, name: string) =>
  Effect.gen(function* () {
    const held = yield* Deferred.make<void>()
    const release = yield* Deferred.make<void>()
    const fiber = yield* Effect.forkChild(
      lock(
        path,
        Effect.gen(function* () {
          log.push(`${name} in`)
          yield* Deferred.succeed(held, undefined)
          yield* Deferred.await(release)
          log.push(`${name} out`)
        })
      ),
      { startImmediately: true }
    )
    return { held, release, fiber }
  })

describe("on PostgreSQL, across connections", () => {
  it("a second replica waits in the database until the first commits", async () => {
    const log: Array<string> = []
    await Effect.runPromise(
      Effect.gen(function* () {
        const a = yield* replica()
        const b = yield* replica()
        const watcher = yield* replica()
        const first = yield* holder(a.lock, "src/f.ts", log, "a")
        yield* Deferred.await(first.held)
        const second = yield* Effect.forkChild(
          b.lock(
            "src/f.ts",
            Effect.sync(() => log.push("b in"))
          ),
          { startImmediately: true }
        )
        yield* waitingInDatabase(watcher.sql, 1)
        expect(log).toEqual(["a in"])
        yield* Deferred.succeed(first.release, undefined)
        yield* Fiber.join(first.fiber)
        yield* Fiber.join(second)
        expect(log).toEqual(["a in", "a out", "b in"])
        yield* waitingInDatabase(watcher.sql, 0)
      }).pipe(Effect.scoped)
    )
  }, 60_000)

  it("store writes made under the lock commit with it, and are not seen before", async () => {
    await Effect.runPromise(
      Effect.gen(function* () {
        const a = yield* replica()
        const b = yield* replica()
        yield* a.sql`CREATE TABLE IF NOT EXISTS marks (v TEXT)`
        const inside = yield* Deferred.make<void>()
        const release = yield* Deferred.make<void>()
        const fiber = yield* Effect.forkChild(
          a.lock(
            "f",
            Effect.gen(function* () {
              yield* a.sql`INSERT INTO marks VALUES ('x')`
              yield* Deferred.succeed(inside, undefined)
              yield* Deferred.await(release)
            })
          ),
          { startImmediately: true }
        )
        yield* Deferred.await(inside)
        expect(yield* b.sql`SELECT v FROM marks`).toEqual([])
        yield* Deferred.succeed(release, undefined)
        yield* Fiber.join(fiber)
        expect(yield* b.sql`SELECT v FROM marks`).toEqual([{ v: "x" }])
      }).pipe(Effect.scoped)
    )
  }, 60_000)

  it("other paths, and the same path in another workspace, do not wait", async () => {
    const log: Array<string> = []
    await Effect.runPromise(
      Effect.gen(function* () {
        const a = yield* replica("/srv/one")
        const b = yield* replica("/srv/one")
        const c = yield* replica("/srv/two")
        const first = yield* holder(a.lock, "f.ts", log, "a")
        yield* Deferred.await(first.held)
        yield* b.lock(
          "g.ts",
          Effect.sync(() => log.push("b other path"))
        )
        yield* c.lock(
          "f.ts",
          Effect.sync(() => log.push("c other workspace"))
        )
        expect(log).toEqual(["a in", "b other path", "c other workspace"])
        yield* Deferred.succeed(first.release, undefined)
        yield* Fiber.join(first.fiber)
      }).pipe(Effect.scoped)
    )
  }, 60_000)

  it("a workspace and path that join to the same text are still two locks", async () => {
    const log: Array<string> = []
    await Effect.runPromise(
      Effect.gen(function* () {
        const a = yield* replica("/a")
        const b = yield* replica("/a/b")
        const first = yield* holder(a.lock, "b/c", log, "a")
        yield* Deferred.await(first.held)
        // ("/a", "b/c") and ("/a/b", "c") name one file, but as keys they must not meet: the
        // second runs while the first is held (it would wait forever if they shared a key).
        yield* b.lock(
          "c",
          Effect.sync(() => log.push("b"))
        )
        expect(log).toEqual(["a in", "b"])
        yield* Deferred.succeed(first.release, undefined)
        yield* Fiber.join(first.fiber)
      }).pipe(Effect.scoped)
    )
  }, 60_000)

  it("the effect's own failure comes back as it was, rolls back and releases the lock", async () => {
    await Effect.runPromise(
      Effect.gen(function* () {
        const a = yield* replica()
        const b = yield* replica()
        yield* a.sql`CREATE TABLE IF NOT EXISTS undone (v TEXT)`
        const exit = yield* Effect.exit(
          a.lock("f", Effect.andThen(a.sql`INSERT INTO undone VALUES ('x')`, Effect.fail("stale" as const)))
        )
        expect(exit).toEqual(Exit.fail("stale"))
        expect(yield* b.lock("f", b.sql`SELECT v FROM undone`)).toEqual([])
      }).pipe(Effect.scoped)
    )
  }, 60_000)

  it("a holder whose connection dies releases the lock; it is told so, by name", async () => {
    const log: Array<string> = []
    await Effect.runPromise(
      Effect.gen(function* () {
        const a = yield* replica()
        const b = yield* replica()
        const watcher = yield* replica()
        yield* a.sql`SELECT set_config('application_name', 'dying-holder', false)`
        const first = yield* holder(a.lock, "f.ts", log, "a")
        yield* Deferred.await(first.held)
        const second = yield* Effect.forkChild(
          b.lock(
            "f.ts",
            Effect.sync(() => log.push("b in"))
          ),
          {
            startImmediately: true
          }
        )
        yield* waitingInDatabase(watcher.sql, 1)
        // The holder's connection, as a replica's dying would end it.
        yield* watcher.sql`SELECT pg_terminate_backend(pid) FROM pg_locks
          WHERE locktype = 'advisory' AND granted AND pid <> pg_backend_pid()`
        yield* Fiber.join(second)
        expect(log).toEqual(["a in", "b in"])
        yield* Deferred.succeed(first.release, undefined)
        const exit = yield* Fiber.await(first.fiber)
        expect(Exit.isFailure(exit)).toBe(true)
        expect(String(exit)).toMatch(/failed while locking f\.ts/)
      }).pipe(Effect.scoped)
    )
  }, 60_000)

  it("with the database down the effect does not run, and the failure names the file and the store", async () => {
    let ran = false
    await Effect.runPromise(
      Effect.gen(function* () {
        const a = yield* replica()
        pg.stop()
        const exit = yield* Effect.exit(
          a.lock(
            "src/f.ts",
            Effect.sync(() => {
              ran = true
            })
          )
        )
        pg.start()
        expect(Exit.isFailure(exit)).toBe(true)
        expect(String(exit)).toMatch(/shared state store .*src\/f\.ts/)
        expect(ran).toBe(false)
        // Back, without a new pool.
        let back = false
        for (let i = 0; i < 100 && !back; i++) {
          back = Exit.isSuccess(yield* Effect.exit(a.lock("src/f.ts", Effect.succeed(true))))
          if (!back) yield* Effect.sleep(100)
        }
        expect(back).toBe(true)
      }).pipe(Effect.scoped)
    )
  }, 90_000)
})

/** A replica on node:sqlite: makePathLock there, as a system with a local store takes it. */
const sqliteReplica = (workspace: string) =>
  Effect.gen(function* () {
    const context = yield* Layer.build(
      storeLayer(parseStore(`${mkdtempSync(join(tmpdir(), "freecode-lock-"))}/state.sqlite`))
    )
    return yield* Effect.provideService(
      makePathLock(workspace),
      SqlClient.SqlClient,
      Context.get(context, SqlClient.SqlClient)
    )
  })

describe("in one process (node:sqlite)", () => {
  it("one holder per path at a time; other paths run meanwhile", async () => {
    const log: Array<string> = []
    await Effect.runPromise(
      Effect.gen(function* () {
        const lock = yield* sqliteReplica("/srv/project")
        const first = yield* holder(lock, "f.ts", log, "a")
        yield* Deferred.await(first.held)
        const second = yield* Effect.forkChild(
          lock(
            "f.ts",
            Effect.sync(() => log.push("b in"))
          ),
          { startImmediately: true }
        )
        yield* lock(
          "g.ts",
          Effect.sync(() => log.push("other path"))
        )
        yield* Effect.yieldNow
        expect(log).toEqual(["a in", "other path"])
        yield* Deferred.succeed(first.release, undefined)
        yield* Fiber.join(second)
        expect(log).toEqual(["a in", "other path", "a out", "b in"])
      }).pipe(Effect.scoped)
    )
  })
})
