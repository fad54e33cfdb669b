/**
 * `effect/sql`'s `SqlClient` over `node:sqlite` (built into Node: no native addon to build). No
 * SQLite client for effect 4.1 is on the registry, so this is the small adapter: one connection
 * shared through a semaphore (`makeSqliteAcquirers`), SQLite's statement compiler, and errors
 * classified by `classifySqliteError`. `node:sqlite` is reached through `process.getBuiltinModule`
 * when a database is opened, so nothing fails to link on a Node that lacks it (docs/install.md).
 */
import type { DatabaseSync, StatementSync } from "node:sqlite"
import { Context, Effect, Layer, type Scope, Semaphore, Stream } from "effect"
import * as Reactivity from "effect/reactivity/Reactivity"
import * as SqlClient from "effect/sql/SqlClient"
import type * as SqlConnection from "effect/sql/SqlConnection"
import { classifySqliteError, SqlError } from "effect/sql/SqlError"
import * as Statement from "effect/sql/Statement"

export interface SqliteNodeConfig {
  /** The database file, or `:memory:`. */
  readonly filename: string
  /** How long a statement waits for another process's lock (SQLite's busy_timeout), default 5,000 ms. */
  readonly busyTimeoutMs?: number
}

/** The client, with the database itself for what only SQLite has (a backup, a PRAGMA). */
export interface SqliteNodeClient extends SqlClient.SqlClient {
  readonly config: SqliteNodeConfig
}

export const SqliteNodeClient = Context.Service<SqliteNodeClient>("freecode-tools/sql/SqliteNodeClient")

const failure = (cause: unknown, message: string, operation: string): SqlError =>
  new SqlError({ reason: classifySqliteError(cause, { message, operation }) })

/** Statements prepared once per text: the session stores run a few dozen distinct ones. */
const PREPARED_CAP = 200

const openDatabase = (config: SqliteNodeConfig): DatabaseSync => {
  const sqlite = process.getBuiltinModule("node:sqlite") as typeof import("node:sqlite")
  const db = new sqlite.DatabaseSync(config.filename)
  db.exec(`PRAGMA busy_timeout = ${Math.max(0, Math.floor(config.busyTimeoutMs ?? 5_000))}`)
  if (config.filename !== ":memory:") db.exec("PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL")
  db.exec("PRAGMA foreign_keys = ON")
  return db
}

const makeConnection = (db: DatabaseSync): SqlConnection.Connection => {
  const prepared = new Map<string, StatementSync>()
  const prepare = (sql: string): StatementSync => {
    let statement = prepared.get(sql)
    if (statement === undefined) {
      if (prepared.size >= PREPARED_CAP) prepared.delete(prepared.keys().next().value as string)
      statement = db.prepare(sql)
      prepared.set(sql, statement)
    }
    return statement
  }
  // SQLite binds numbers, bigints, strings, Uint8Arrays and null; booleans and Dates are the
  // values a caller is likely to pass besides.
  const bind = (params: ReadonlyArray<unknown>) =>
    params.map((p) =>
      typeof p === "boolean" ? (p ? 1 : 0) : p instanceof Date ? p.toISOString() : p === undefined ? null : p
    ) as Array<null | number | bigint | string | Uint8Array>
  const run = (sql: string, params: ReadonlyArray<unknown>, cached: boolean): Effect.Effect<Array<object>, SqlError> =>
    Effect.try({
      try: () => {
        const statement = cached ? prepare(sql) : db.prepare(sql)
        // A statement that returns no columns (an INSERT without RETURNING, DDL) is run, not read.
        if (statement.columns().length === 0) {
          statement.run(...bind(params))
          return []
        }
        return statement.all(...bind(params)) as Array<object>
      },
      catch: (cause) => failure(cause, "Failed to execute statement", "execute")
    })
  const values = (sql: string, params: ReadonlyArray<unknown>, cached: boolean) =>
    Effect.try({
      try: () => {
        const statement = cached ? prepare(sql) : db.prepare(sql)
        if (statement.columns().length === 0) {
          statement.run(...bind(params))
          return [] as Array<ReadonlyArray<unknown>>
        }
        statement.setReturnArrays(true)
        try {
          return statement.all(...bind(params)) as unknown as Array<ReadonlyArray<unknown>>
        } finally {
          statement.setReturnArrays(false)
        }
      },
      catch: (cause) => failure(cause, "Failed to execute statement", "execute")
    })
  return {
    execute: (sql, params, transformRows) =>
      transformRows ? Effect.map(run(sql, params, true), transformRows) : run(sql, params, true),
    executeRaw: (sql, params) => run(sql, params, true),
    executeStream: (sql, params, transformRows) =>
      Stream.fromIterableEffect(
        transformRows ? Effect.map(run(sql, params, true), transformRows) : run(sql, params, true)
      ),
    executeValues: (sql, params) => values(sql, params, true),
    executeValuesUnprepared: (sql, params) => values(sql, params, false),
    executeUnprepared: (sql, params, transformRows) =>
      transformRows ? Effect.map(run(sql, params, false), transformRows) : run(sql, params, false)
  }
}

/** A client over one database, closed with the scope. */
export const make = (
  config: SqliteNodeConfig
): Effect.Effect<SqliteNodeClient, SqlError, Scope.Scope | Reactivity.Reactivity> =>
  Effect.gen(function* () {
    const db = yield* Effect.acquireRelease(
      Effect.try({
        try: () => openDatabase(config),
        catch: (cause) => failure(cause, `Failed to open ${config.filename}`, "connect")
      }),
      (db) => Effect.sync(() => db.close())
    )
    const connection = makeConnection(db)
    const acquirers = SqlClient.makeSqliteAcquirers({
      connection: Effect.succeed(connection),
      semaphore: yield* Semaphore.make(1),
      isTransaction: () => db.isTransaction
    })
    const client = yield* SqlClient.make({
      acquirer: acquirers.acquirer,
      borrower: acquirers.borrower,
      transactionAcquirer: acquirers.transactionAcquirer,
      onCommitFailure: acquirers.onCommitFailure,
      isTransaction: acquirers.isTransaction,
      compiler: Statement.makeCompilerSqlite(),
      driver: "sqlite-node",
      spanAttributes: [["db.system.name", "sqlite"]],
      // BEGIN IMMEDIATE: a transaction that will write takes the write lock at once, so two
      // processes never both read and then fail to upgrade (SQLITE_BUSY mid-transaction).
      beginTransaction: "BEGIN IMMEDIATE"
    })
    return Object.assign(client, { config }) as SqliteNodeClient
  })

export const layer = (config: SqliteNodeConfig): Layer.Layer<SqliteNodeClient | SqlClient.SqlClient, SqlError> =>
  Layer.effectContext(
    Effect.map(make(config), (client) =>
      Context.make(SqliteNodeClient, client).pipe(Context.add(SqlClient.SqlClient, client))
    )
  ).pipe(Layer.provide(Reactivity.layer))
