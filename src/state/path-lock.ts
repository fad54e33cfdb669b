/**
 * One writer per (workspace, path) across every replica: the stale-file check, the write and the
 * read record's update run inside `withPathLock`, so two replicas editing one file at once apply
 * one after the other, and the second's check sees the first's write.
 *
 * On PostgreSQL the lock is a transaction-scoped advisory lock (`pg_advisory_xact_lock`) taken at
 * the start of a transaction that wraps the effect: every replica's connection sees it, it ends
 * with the commit or rollback (a replica that dies mid-edit loses its connection, so its lock
 * goes with it), and the store writes the effect makes join that transaction. On node:sqlite
 * (one machine) it is a lock in this process; other processes on the machine are kept apart by
 * the native write layer's machine-wide lock files (src/edit/path-lock.ts).
 *
 * A lock that cannot be taken (the database unreachable) fails the effect unrun, with
 * `SharedStateError` as a defect naming the file: writing without it could lose the other
 * replica's edit.
 */
import { createHash } from "node:crypto"
import { Effect } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import { makeLockTable } from "../process-wide/lock-table.ts"
import { SharedStateError } from "./records.ts"

/** An effect's own failure, carried through the transaction so it is not taken for the store's. */
class Own {
  readonly error: unknown
  constructor(error: unknown) {
    this.error = error
  }
}

/** Runs `effect` holding the lock of `path` in this workspace. */
export type WithPathLock = <A, E, R>(path: string, effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>

/**
 * The advisory lock key of (workspace, path): the first 8 bytes of their SHA-256 as a signed
 * 64-bit integer, in decimal. Two paths sharing a key only queue behind each other.
 */
const pathLockKey = (workspace: string, path: string): string =>
  createHash("sha256").update(workspace).update("\u0000").update(path).digest().readBigInt64BE(0).toString()

/** This process's locks, by key, each dropped when nobody holds or waits for it (lock-table.ts). */
const inProcessPathLock = (workspace: string): WithPathLock => {
  const table = makeLockTable()
  return (path, effect) => table.withLock(`${workspace}\u0000${path}`, effect)
}

/**
 * The lock for the store in context: PostgreSQL's advisory transaction lock, or this process's
 * lock on node:sqlite.
 */
export const makePathLock = (workspace: string): Effect.Effect<WithPathLock, never, SqlClient.SqlClient> =>
  Effect.map(SqlClient.SqlClient, (sql) =>
    sql.onDialectOrElse({
      pg: (): WithPathLock => (path, effect) => {
        const key = pathLockKey(workspace, path)
        const locked = sql`SELECT pg_advisory_xact_lock(${key}::bigint)`.pipe(
          Effect.catchCause((cause) =>
            Effect.die(
              new SharedStateError({
                message: `the shared state store could not be reached to lock ${path} against other replicas' edits (${String(cause).split("\n")[0]}); nothing was changed. Retry once the database is back.`
              })
            )
          )
        )
        // The commit or rollback that ends the transaction is what releases the lock. The
        // effect's own failures are carried through it boxed, so only a failure to begin or
        // commit (the database gone) is named here.
        return sql
          .withTransaction(
            Effect.andThen(
              locked,
              Effect.mapError(effect, (error) => new Own(error))
            )
          )
          .pipe(
            Effect.catch((e) =>
              e instanceof Own
                ? Effect.fail(e.error as never)
                : Effect.die(
                    new SharedStateError({
                      message: `the shared state store failed while locking ${path} against other replicas' edits (${e.message}); if the change was made, its records in the store were not kept. Check what the file holds before retrying.`
                    })
                  )
            )
          )
      },
      orElse: () => inProcessPathLock(workspace)
    })
  )
