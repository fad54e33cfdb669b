/**
 * This replica's lease on the shared state, with a fencing epoch. A replica registers a row (its
 * own id, epoch 1, an expiry timed by the database's clock) and renews it; a replica whose lease
 * ran out (killed, or paused past it) is fenced by the next one that looks: its epoch goes up and
 * its running jobs become `lost`. Every state write runs in one transaction that first checks this
 * replica's row still has the epoch it registered with and has not expired, so a replica that
 * wakes up after being fenced cannot overwrite what its successor wrote. A fenced replica never
 * writes again: it says so (`HostFenced`) and its owner stops serving (docs/scaling.md).
 */
import { randomUUID } from "node:crypto"
import { hostname } from "node:os"
import { Context, Duration, Effect, Layer, Option, Schedule, Schema } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import type { SqlError } from "effect/sql/SqlError"
import type * as Statement from "effect/sql/Statement"
import { StoreUnavailable } from "../sql/connect.ts"
import { nowMs } from "../sql/migrations.ts"

/** A write refused because this replica's lease was taken over, or ran out before it renewed. */
export class HostFenced extends Schema.TaggedError<HostFenced>()("HostFenced", {
  hostId: Schema.String,
  message: Schema.String
}) {}

export interface HostLeaseOptions {
  /** The workspace this replica serves (its project root). */
  readonly workspace: string
  /** How long a lease lasts without renewal (default 10 s); renewed every third of it. */
  readonly ttlMs?: number
  /** The first lease lasts at least this long (default: one lease). */
  readonly firstLeaseMs?: number
}

export interface HostLeaseShape {
  readonly hostId: string
  readonly workspace: string
  readonly epoch: number
  readonly ttlMs: number
  /**
   * The condition "this replica still holds its lease at its epoch", as a WHERE clause for a
   * single-statement write (`INSERT … SELECT … ${held} … RETURNING 1`): one round trip, no
   * transaction, and the write and the check are one atomic statement.
   */
  readonly held: Statement.Fragment
  /** Fails with HostFenced when a guarded write returned no row (the condition did not hold). */
  readonly expectHeld: (rows: ReadonlyArray<unknown>) => Effect.Effect<void, HostFenced>
  /** Runs `effect` in one transaction, after checking this replica still holds its lease at its epoch. */
  readonly write: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E | HostFenced | SqlError, R>
  /** Renews the lease; fails with HostFenced when it was taken over or ran out. */
  readonly renew: Effect.Effect<void, HostFenced | SqlError>
  /** Fences every expired replica: its epoch goes up and its running jobs become lost. The count fenced. */
  readonly fenceExpired: Effect.Effect<number, SqlError>
}

export class HostLease extends Context.Service<HostLease, HostLeaseShape>()("freecode/HostLease") {}

const DEFAULT_TTL_MS = 10_000
const START_GRACE_MS = 60_000

export const makeHostLease = Effect.fnUntraced(function* (
  options: HostLeaseOptions
): Effect.fn.Return<HostLeaseShape, SqlError, SqlClient.SqlClient> {
  const sql = yield* SqlClient.SqlClient
  const now = sql.unsafe(nowMs(sql))
  const ttlMs = options.ttlMs ?? DEFAULT_TTL_MS
  const hostId = `${hostname()}-${process.pid}-${randomUUID().slice(0, 8)}`
  const epoch = 1
  yield* sql`INSERT INTO fc_hosts (host_id, workspace, epoch, expires_at, started_at)
      VALUES (${hostId}, ${options.workspace}, ${epoch}, ${now} + ${Math.max(ttlMs, options.firstLeaseMs ?? 0)}, ${now})`
  const fenced = () =>
    new HostFenced({
      hostId,
      message: `this replica (${hostId}) was fenced after its lease ran out: another replica has taken over its sessions and jobs, and what it would write now is refused. Restart it to serve again.`
    })
  // Only the epoch is checked: a lease that ran out but that nobody fenced is still this
  // replica's (a database outage longer than the lease must not fence everyone). On PostgreSQL
  // the row is locked FOR SHARE, so a fencing that starts meanwhile waits for this write.
  const lock = sql.onDialectOrElse({ pg: () => sql.unsafe("FOR SHARE"), orElse: () => sql.unsafe("") })
  const check = Effect.flatMap(
    sql<{ epoch: number | string }>`SELECT epoch FROM fc_hosts WHERE host_id = ${hostId} ${lock}`,
    (rows) => (rows[0] !== undefined && Number(rows[0].epoch) === epoch ? Effect.void : Effect.fail(fenced()))
  )
  const write = <A, E, R>(effect: Effect.Effect<A, E, R>) => sql.withTransaction(Effect.andThen(check, effect))
  const held = sql`WHERE EXISTS (SELECT 1 FROM fc_hosts WHERE host_id = ${hostId} AND epoch = ${epoch} ${lock})`
  const expectHeld = (rows: ReadonlyArray<unknown>) => (rows.length > 0 ? Effect.void : Effect.fail(fenced()))
  const renew = Effect.flatMap(
    sql<{ host_id: string }>`UPDATE fc_hosts SET expires_at = ${now} + ${ttlMs}
        WHERE host_id = ${hostId} AND epoch = ${epoch} RETURNING host_id`,
    (rows) => (rows.length === 1 ? Effect.void : Effect.fail(fenced()))
  )
  const fenceExpired = sql.withTransaction(
    Effect.gen(function* () {
      const expired = yield* sql<{ host_id: string }>`UPDATE fc_hosts SET epoch = epoch + 1, expires_at = 0
          WHERE workspace = ${options.workspace} AND host_id <> ${hostId} AND expires_at <= ${now} AND expires_at > 0
          RETURNING host_id`
      for (const { host_id } of expired) {
        yield* sql`UPDATE fc_jobs SET state = 'lost', updated_at = ${now} WHERE host_id = ${host_id} AND state = 'running'`
      }
      return expired.length
    })
  )
  return { hostId, workspace: options.workspace, epoch, ttlMs, held, expectHeld, write, renew, fenceExpired }
})

/**
 * The lease, renewed in the background every third of its life, and other replicas' expired
 * leases fenced as it goes. `onFenced` is told once when this replica finds itself fenced (the
 * CLI stops serving). A renewal that cannot reach the database is retried: the lease may still
 * be valid when the database comes back.
 */
export const layer = (options: HostLeaseOptions & { readonly onFenced?: (e: HostFenced) => Effect.Effect<void> }) =>
  Layer.effect(
    HostLease,
    Effect.gen(function* () {
      // The first lease lasts a minute: a replica still loading (on a starved machine, seconds
      // of module evaluation with no turn for its renewal) is not fenced before it served anything.
      const lease = yield* makeHostLease({ firstLeaseMs: START_GRACE_MS, ...options }).pipe(
        Effect.mapError(
          (e) =>
            new StoreUnavailable({
              store: "the shared state store",
              message: `this replica could not register its lease in the shared state store (${e.message}). Check that the store is reachable, then start again.`
            })
        )
      )
      const every = Duration.millis(Math.max(50, Math.floor(lease.ttlMs / 3)))
      // After the database was unreachable, others' leases ran out for the same reason this
      // one's did: fence nobody until they have had a whole lease to renew (this host's clock
      // only measures that wait; the leases themselves are timed by the database's).
      let fenceFrom = 0
      const beat = lease.renew.pipe(
        Effect.andThen(
          Effect.suspend(() => (Date.now() >= fenceFrom ? Effect.ignore(lease.fenceExpired) : Effect.void))
        ),
        Effect.catchTag("HostFenced", (e) =>
          (options.onFenced ? options.onFenced(e) : Effect.void).pipe(Effect.andThen(Effect.fail(e)))
        ),
        Effect.catchTag("SqlError", () =>
          Effect.sync(() => {
            fenceFrom = Date.now() + lease.ttlMs
          })
        )
      )
      yield* Effect.forkScoped(Effect.repeat(beat, Schedule.spaced(every)).pipe(Effect.ignore))
      yield* Effect.addFinalizer(() =>
        // A clean stop gives the lease back at once, so nobody waits for it to run out.
        Effect.ignore(
          lease.write(
            SqlClient.SqlClient.pipe(Effect.flatMap((sql) => sql`DELETE FROM fc_hosts WHERE host_id = ${lease.hostId}`))
          )
        )
      )
      return lease
    })
  )

/**
 * The shared store a built system holds, with this replica's lease on it; undefined when the
 * system has none (the embedded default): what the features that span replicas need to start.
 */
export const sharedStoreOf = (
  system: Context.Context<never>
): { readonly sql: SqlClient.SqlClient; readonly lease: HostLeaseShape } | undefined => {
  const sql = Context.getOption(system as Context.Context<SqlClient.SqlClient>, SqlClient.SqlClient)
  const lease = Context.getOption(system as Context.Context<HostLease>, HostLease)
  return Option.isNone(sql) || Option.isNone(lease) ? undefined : { sql: sql.value, lease: lease.value }
}
