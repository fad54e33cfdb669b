import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect, Exit } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import { afterAll, describe, expect, it } from "vitest"
import * as SqliteNode from "../../src/sql/sqlite-node.ts"

const dir = mkdtempSync(join(tmpdir(), "freecode-sqlite-node-"))
afterAll(() => rmSync(dir, { recursive: true, force: true }))
let n = 0
const run = <A, E>(effect: Effect.Effect<A, E, SqlClient.SqlClient>, file = join(dir, `${++n}.db`)) =>
  Effect.runPromiseExit(effect.pipe(Effect.provide(SqliteNode.layer({ filename: file }))))

describe("SqlClient over node:sqlite", () => {
  it("runs statements with parameters, returns rows and values", async () => {
    const exit = await run(
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        yield* sql`CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT, data BLOB, flag INTEGER)`
        yield* sql`INSERT INTO t ${sql.insert([
          { id: 1, name: "a", data: new Uint8Array([1, 2]), flag: true },
          { id: 2, name: "b", data: new Uint8Array([]), flag: false }
        ])}`
        const rows = yield* sql<{
          id: number
          name: string
          flag: number
        }>`SELECT id, name, flag FROM t WHERE id IN ${sql.in([1, 2])} ORDER BY id`
        const values = yield* sql`SELECT name FROM t ORDER BY id`.values
        const blob = yield* sql<{ data: Uint8Array }>`SELECT data FROM t WHERE id = ${1}`
        return { rows, values, blob: [...blob[0]!.data] }
      })
    )
    expect(exit).toEqual(
      Exit.succeed({
        rows: [
          { id: 1, name: "a", flag: 1 },
          { id: 2, name: "b", flag: 0 }
        ],
        values: [["a"], ["b"]],
        blob: [1, 2]
      })
    )
  })

  it("commits a transaction whole or not at all", async () => {
    const file = join(dir, "tx.db")
    await run(
      Effect.flatMap(SqlClient.SqlClient, (sql) => sql`CREATE TABLE t (v INTEGER)`),
      file
    )
    const failed = await run(
      Effect.flatMap(SqlClient.SqlClient, (sql) =>
        sql.withTransaction(Effect.andThen(sql`INSERT INTO t VALUES (1)`, Effect.fail("stop" as const)))
      ),
      file
    )
    expect(Exit.isFailure(failed)).toBe(true)
    const kept = await run(
      Effect.flatMap(SqlClient.SqlClient, (sql) =>
        Effect.andThen(
          sql.withTransaction(Effect.andThen(sql`INSERT INTO t VALUES (2)`, sql`INSERT INTO t VALUES (3)`)),
          sql<{ v: number }>`SELECT v FROM t ORDER BY v`
        )
      ),
      file
    )
    expect(kept).toEqual(Exit.succeed([{ v: 2 }, { v: 3 }]))
  })

  it("fails typed, naming what went wrong, on bad SQL and on a file that is not a database", async () => {
    const bad = await run(Effect.flatMap(SqlClient.SqlClient, (sql) => sql`SELEC nonsense`))
    expect(Exit.isFailure(bad)).toBe(true)
    expect(String(bad)).toMatch(/SqlError/)
    const junk = join(dir, "junk.db")
    writeFileSync(junk, "this is not a database, just text ".repeat(200))
    const opened = await run(
      Effect.flatMap(SqlClient.SqlClient, (sql) => sql`SELECT * FROM sqlite_master`),
      junk
    )
    expect(Exit.isFailure(opened)).toBe(true)
    expect(String(opened)).toMatch(/SqlError/)
  })
})
