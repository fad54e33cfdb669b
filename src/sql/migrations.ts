/**
 * The one set of migrations for the shared state, for both engines (`node:sqlite` and
 * PostgreSQL). Each is a list of statements; the few types that differ (bytes, big integers) are
 * chosen by the client's dialect, so the tables, keys and queries are the same on both. Applied
 * by `effect/sql`'s Migrator, which records them in `fc_migrations`; on PostgreSQL under an
 * advisory lock, so replicas starting together apply each migration once.
 */
import { Effect } from "effect"
import * as Migrator from "effect/sql/Migrator"
import * as SqlClient from "effect/sql/SqlClient"
import type { SqlError } from "effect/sql/SqlError"

interface Types {
  readonly bytes: string
  readonly int: string
  /** An integer key the database numbers, ascending. */
  readonly serial: string
}

const statements = (t: Types): ReadonlyArray<ReadonlyArray<string>> => [
  [
    // A replica serving a workspace: its lease, timed by the database's clock (ms), and the
    // fencing epoch every state write it makes is checked against.
    `CREATE TABLE fc_hosts (host_id TEXT PRIMARY KEY, workspace TEXT NOT NULL, epoch ${t.int} NOT NULL, expires_at ${t.int} NOT NULL, started_at ${t.int} NOT NULL)`,
    `CREATE TABLE fc_sessions (session_id TEXT PRIMARY KEY, workspace TEXT NOT NULL, era TEXT NOT NULL, client_info TEXT NOT NULL, capabilities TEXT NOT NULL, created_at ${t.int} NOT NULL, seen_at ${t.int} NOT NULL)`,
    `CREATE TABLE fc_outputs (session_id TEXT NOT NULL, id TEXT NOT NULL, tool TEXT NOT NULL, chars ${t.int} NOT NULL, lines ${t.int} NOT NULL, bytes ${t.int} NOT NULL, chunks ${t.int} NOT NULL, created_at ${t.int} NOT NULL, PRIMARY KEY (session_id, id))`,
    `CREATE TABLE fc_output_chunks (session_id TEXT NOT NULL, id TEXT NOT NULL, seq ${t.int} NOT NULL, data ${t.bytes} NOT NULL, PRIMARY KEY (session_id, id, seq))`,
    `CREATE TABLE fc_grants (session_id TEXT NOT NULL, grant_key TEXT NOT NULL, display TEXT NOT NULL, created_at ${t.int} NOT NULL, PRIMARY KEY (session_id, grant_key))`,
    `CREATE TABLE fc_todos (session_id TEXT PRIMARY KEY, todos TEXT NOT NULL, updated_at ${t.int} NOT NULL)`,
    `CREATE TABLE fc_jobs (session_id TEXT NOT NULL, id TEXT NOT NULL, host_id TEXT NOT NULL, host_epoch ${t.int} NOT NULL, record TEXT NOT NULL, state TEXT NOT NULL, updated_at ${t.int} NOT NULL, PRIMARY KEY (session_id, id))`,
    "CREATE INDEX fc_jobs_host ON fc_jobs (host_id, state)",
    `CREATE TABLE fc_read_state (workspace TEXT NOT NULL, session_id TEXT NOT NULL, path TEXT NOT NULL, record TEXT NOT NULL, updated_at ${t.int} NOT NULL, PRIMARY KEY (workspace, session_id, path))`
  ],
  [
    // What an MCP session's streams carried, for a client resuming with Last-Event-ID on any
    // replica; the id orders a session's events.
    `CREATE TABLE fc_mcp_events (id ${t.serial}, session_id TEXT NOT NULL, stream_id TEXT NOT NULL, message TEXT NOT NULL, created_at ${t.int} NOT NULL)`,
    "CREATE INDEX fc_mcp_events_session ON fc_mcp_events (session_id, stream_id, id)"
  ],
  [
    // The key that signs 2026-era requestStates, one per store (every replica signs and checks
    // with it), made once by whichever replica inserts it first.
    `CREATE TABLE fc_secrets (name TEXT PRIMARY KEY, value TEXT NOT NULL, created_at ${t.int} NOT NULL)`,
    // Each requestState's nonce, inserted once: a state used on one replica is refused on all.
    `CREATE TABLE fc_state_nonces (nonce TEXT PRIMARY KEY, expires_at ${t.int} NOT NULL)`,
    // A retry that reached another replica than the one whose memory holds the suspended call:
    // its answer, handed over (status given → taken → done), and the held call's outcome back.
    `CREATE TABLE fc_held_handoffs (nonce TEXT PRIMARY KEY, holder TEXT NOT NULL, host_id TEXT NOT NULL, held_id TEXT NOT NULL, request TEXT NOT NULL, status TEXT NOT NULL, outcome TEXT, expires_at ${t.int} NOT NULL)`,
    "CREATE INDEX fc_held_handoffs_holder ON fc_held_handoffs (holder, status)"
  ]
]

const loader = (dialectTypes: Types) =>
  Migrator.fromRecord(
    Object.fromEntries(
      statements(dialectTypes).map((list, i) => [
        `${i + 1}_shared_state_${i + 1}`,
        Effect.flatMap(SqlClient.SqlClient, (sql) =>
          Effect.forEach(list, (statement) => sql.unsafe(statement), { discard: true })
        )
      ])
    )
  )

/** Brings the database up to date; safe to run from several replicas at once. */
export const migrate: Effect.Effect<void, SqlError | Migrator.MigrationError, SqlClient.SqlClient> = Effect.gen(
  function* () {
    const sql = yield* SqlClient.SqlClient
    const run = Migrator.make({})({ loader: loader(types(sql)), table: "fc_migrations" })
    yield* sql.onDialectOrElse({
      pg: () =>
        sql.withTransaction(
          // One key for this project's migrations; the lock ends with the transaction.
          Effect.andThen(sql`SELECT pg_advisory_xact_lock(7355608, 1)`, run)
        ),
      orElse: () => run
    })
  }
)

const types = (sql: SqlClient.SqlClient): Types =>
  sql.onDialectOrElse({
    pg: () => ({ bytes: "BYTEA", int: "BIGINT", serial: "BIGSERIAL PRIMARY KEY" }),
    orElse: () => ({ bytes: "BLOB", int: "INTEGER", serial: "INTEGER PRIMARY KEY AUTOINCREMENT" })
  })

/** The database's clock in milliseconds, as an SQL expression (leases are timed by it, never a host's). */
export const nowMs = (sql: SqlClient.SqlClient): string =>
  sql.onDialectOrElse({
    pg: () => "(EXTRACT(EPOCH FROM clock_timestamp()) * 1000)::BIGINT",
    orElse: () => "CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER)"
  })
