/**
 * The two engines of the shared state, for a test file to run the same tests on each: a fresh
 * node:sqlite file, and a database in one PostgreSQL cluster started for the whole file.
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll } from "vitest"
import type { StoreLocation } from "../../src/sql/connect.ts"
import { type PgCluster, removePostgres, startPostgres } from "./postgres.ts"

export interface Engine {
  readonly name: "sqlite" | "postgres"
  /** A location with an empty schema of its own: each call gets a new database. */
  readonly fresh: () => StoreLocation
  readonly cluster: () => PgCluster | undefined
}

/** Starts the cluster once for the file (and removes it and the sqlite files after). */
export const useEngines = (): ReadonlyArray<Engine> => {
  let pg: PgCluster | undefined
  const dir = mkdtempSync(join(tmpdir(), "freecode-sql-"))
  let count = 0
  beforeAll(async () => {
    pg = await startPostgres()
  }, 120_000)
  afterAll(() => {
    if (pg !== undefined) removePostgres(pg)
    rmSync(dir, { recursive: true, force: true })
  })
  return [
    {
      name: "sqlite",
      fresh: () => ({ engine: "sqlite", file: join(dir, `db-${++count}.sqlite`) }),
      cluster: () => undefined
    },
    {
      name: "postgres",
      fresh: () => {
        const name = `t${++count}`
        pg!.psql(`CREATE DATABASE ${name}`)
        return { engine: "postgres", url: pg!.url.replace(/\/freecode$/, `/${name}`) }
      },
      cluster: () => pg
    }
  ]
}
