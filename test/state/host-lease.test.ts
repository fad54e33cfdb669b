import { Effect, Exit } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import { describe, expect, it } from "vitest"
import { storeLayer } from "../../src/sql/connect.ts"
import { makeHostLease } from "../../src/state/host-lease.ts"
import { useEngines } from "../support/engines.ts"

const engines = useEngines()

describe.each(engines)("host leases on $name", (engine) => {
  it("a replica past its lease is fenced by the next: its late writes are refused, its running jobs become lost", async () => {
    const exit = await Effect.runPromiseExit(
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const a = yield* makeHostLease({ workspace: "/w", ttlMs: 300 })
        const b = yield* makeHostLease({ workspace: "/w", ttlMs: 60_000 })
        yield* sql`CREATE TABLE notes (who TEXT)`
        yield* a.write(sql`INSERT INTO notes VALUES ('a, in time')`)
        yield* a.write(
          sql`INSERT INTO fc_jobs (session_id, id, host_id, host_epoch, record, state, updated_at) VALUES ('s', 'j1', ${a.hostId}, 1, '{}', 'running', 0)`
        )
        // a is paused past its lease (it does not renew); b looks and fences it.
        yield* Effect.sleep(600)
        const fenced = yield* b.fenceExpired
        const late = yield* Effect.exit(a.write(sql`INSERT INTO notes VALUES ('a, late')`))
        const renewed = yield* Effect.exit(a.renew)
        yield* b.write(sql`INSERT INTO notes VALUES ('b')`)
        const notes = yield* sql<{ who: string }>`SELECT who FROM notes ORDER BY who`
        const jobs = yield* sql<{ state: string }>`SELECT state FROM fc_jobs WHERE id = 'j1'`
        return { fenced, late, renewed, notes: notes.map((n) => n.who), jobs: jobs.map((j) => j.state) }
      }).pipe(Effect.provide(storeLayer(engine.fresh())))
    )
    expect(Exit.isSuccess(exit)).toBe(true)
    if (!Exit.isSuccess(exit)) return
    const value = exit.value
    expect(value.fenced).toBe(1)
    expect(String(value.late)).toMatch(/HostFenced/)
    expect(String(value.renewed)).toMatch(/HostFenced/)
    expect(value.notes).toEqual(["a, in time", "b"])
    expect(value.jobs).toEqual(["lost"])
  })

  it("a live replica is never fenced, and renewing keeps it live", async () => {
    const exit = await Effect.runPromiseExit(
      Effect.gen(function* () {
        const a = yield* makeHostLease({ workspace: "/w", ttlMs: 3_000 })
        const b = yield* makeHostLease({ workspace: "/w", ttlMs: 3_000 })
        for (let i = 0; i < 4; i++) {
          yield* Effect.sleep(150)
          yield* a.renew
          yield* b.renew
        }
        return [yield* b.fenceExpired, yield* a.fenceExpired]
      }).pipe(Effect.provide(storeLayer(engine.fresh())))
    )
    expect(exit).toEqual(Exit.succeed([0, 0]))
  })
})

it("an unreachable store fails typed, naming the store without its password", async () => {
  const exit = await Effect.runPromiseExit(
    Effect.provide(Effect.void, storeLayer({ engine: "postgres", url: "postgres://u:secret@127.0.0.1:1/db" })).pipe(
      Effect.timeout(30_000)
    )
  )
  expect(Exit.isFailure(exit)).toBe(true)
  expect(String(exit)).toMatch(/StoreUnavailable/)
  expect(String(exit)).toMatch(/127\.0\.0\.1:1/)
  expect(String(exit)).not.toMatch(/secret/)
})
