/**
 * What the shared state store adds to a call: the same calls through three tool systems, side
 * by side in one run, alternating — memory (no store), the embedded node:sqlite store, and
 * PostgreSQL on loopback (a throwaway cluster started here, as the tests do) — and the memory a
 * replica holds on each.
 *   node bench/store.ts
 * Two calls: `read` of a small file, each in a new session (so read de-duplication finds nothing
 * here and asks the store, and the output and the read record are written through to it), and
 * `todowrite` (one row), each timed per call, the median of ROUNDS rounds reported; beside them,
 * one `SELECT 1` round trip to each store, and the machine's load average.
 */
import * as NodeFs from "node:fs"
import { loadavg } from "node:os"
import { Context, Effect, Exit, Layer, Option, Scope } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import { testToolSystem } from "../layers/test.ts"
import { Dispatcher } from "../src/dispatch/dispatcher.ts"
import { DefaultMode } from "../src/permission/engine.ts"
import { removePostgres, startPostgres } from "../test/support/postgres.ts"

const ROUNDS = 7
const CALLS = 200

const median = (xs: ReadonlyArray<number>) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!

const main = async () => {
  const pg = await startPostgres()
  const root = NodeFs.realpathSync(NodeFs.mkdtempSync("/tmp/freecode-bench-store-"))
  NodeFs.writeFileSync(`${root}/small.ts`, Array.from({ length: 60 }, (_, i) => `export const v${i} = ${i}`).join("\n"))
  try {
    const scope = Effect.runSync(Scope.make())
    const build = async (store: string | undefined) => {
      const rss0 = process.memoryUsage().rss
      const context = await Effect.runPromise(
        Scope.provide(
          Layer.build(testToolSystem({ root, ...(store === undefined ? {} : { store: { store } }) })).pipe(
            Effect.provideService(DefaultMode, "acceptEdits")
          ),
          scope
        )
      )
      return {
        dispatcher: Context.get(context, Dispatcher),
        sql: Context.getOption(context as unknown as Context.Context<SqlClient.SqlClient>, SqlClient.SqlClient),
        rss: process.memoryUsage().rss - rss0
      }
    }
    const systems = [
      { name: "memory", ...(await build(undefined)) },
      { name: "node:sqlite", ...(await build(`${root}/.state.sqlite`)) },
      { name: "postgres (loopback)", ...(await build(pg.url)) }
    ]
    const perCall: Record<string, { read: Array<number>; todo: Array<number>; trip: Array<number> }> = {}
    for (const s of systems) perCall[s.name] = { read: [], todo: [], trip: [] }
    let n = 0
    for (let round = 0; round < ROUNDS + 1; round++) {
      for (const s of systems) {
        for (const tool of ["read", "todo"] as const) {
          const t0 = performance.now()
          for (let i = 0; i < CALLS; i++) {
            const id = `c${++n}`
            const call =
              tool === "read"
                ? { id, name: "read", args: { filePath: "small.ts" } }
                : { id, name: "todowrite", args: { todos: [{ id: "1", content: `step ${i}`, status: "pending" }] } }
            const sessionId = tool === "read" ? `bench-${round}-${i}` : `bench-${round}`
            const result = await Effect.runPromise(s.dispatcher.dispatch(call, { sessionId }))
            if (result.status !== "ok") throw new Error(`${s.name} ${tool}: ${result.modelOutput}`)
          }
          // The first round warms up (JIT, prepared statements, pool connections).
          if (round > 0) perCall[s.name]![tool].push(((performance.now() - t0) * 1000) / CALLS)
        }
        if (Option.isSome(s.sql)) {
          const sql = s.sql.value
          const t0 = performance.now()
          for (let i = 0; i < CALLS; i++) await Effect.runPromise(sql`SELECT 1`)
          if (round > 0) perCall[s.name]!.trip.push(((performance.now() - t0) * 1000) / CALLS)
        }
      }
    }
    const base = perCall.memory!
    console.log(
      `load average ${loadavg()
        .map((l) => l.toFixed(1))
        .join(" ")}`
    )
    console.log(
      `| store | read µs/call | added | todowrite µs/call | added | SELECT 1 µs | replica memory after build |`
    )
    console.log(`| --- | --- | --- | --- | --- | --- | --- |`)
    for (const s of systems) {
      const f = perCall[s.name]!
      const r = median(f.read)
      const t = median(f.todo)
      console.log(
        `| ${s.name} | ${r.toFixed(0)} | +${(r - median(base.read)).toFixed(0)} | ${t.toFixed(0)} | +${(t - median(base.todo)).toFixed(0)} | ${f.trip.length === 0 ? "–" : median(f.trip).toFixed(0)} | ${(s.rss / 1024 / 1024).toFixed(1)} MB |`
      )
    }
    await Effect.runPromise(Scope.close(scope, Exit.void))
  } finally {
    removePostgres(pg)
    NodeFs.rmSync(root, { recursive: true, force: true })
  }
}

await main()
