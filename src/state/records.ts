/**
 * Grants, todos and job records on the shared store (`effect/sql`: node:sqlite or PostgreSQL),
 * behind the same services the session database serves, so any replica sees what another wrote.
 * Every write goes through this replica's lease (host-lease.ts): a fenced replica writes nothing.
 * Grants are cached per replica, both the keys the database said yes to and those it said no
 * to, and a session's cache is dropped when any replica changes one of its grants: through
 * PostgreSQL's LISTEN/NOTIFY, or, on one machine's node:sqlite file, by asking every time.
 */
import { Effect, Layer, Option, Queue, Schema } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import { GrantStore } from "../session/grants.ts"
import { type JobRecord, JobRecordStore, JobStateSchema } from "../session/job-records.ts"
import { type Todo, TodoStore } from "../session/todos.ts"
import { HostLease } from "./host-lease.ts"

/** A state store that failed mid-call: names what was being done and what to do. */
export class SharedStateError extends Schema.TaggedError<SharedStateError>()("SharedStateError", {
  message: Schema.String
}) {}

const failed = (what: string) => (cause: unknown) =>
  Effect.die(
    new SharedStateError({
      message: `the shared state store failed while ${what} (${String(cause).split("\n")[0]}). Check that the database is reachable; the call can be retried once it is.`
    })
  )

/** The most "no" answers a replica keeps (over all sessions) before it starts over. */
const MISSES_KEPT = 10_000

/** The channel grant changes are announced on; the payload is the session id. */
export const GRANTS_CHANNEL = "freecode_grants"

interface PgListen {
  readonly listen: (
    channel: string
  ) => Effect.Effect<Queue.Dequeue<{ readonly payload: string }, unknown>, unknown, never>
  readonly notify: (channel: string, payload: string) => Effect.Effect<void, unknown>
}

const asPg = (sql: SqlClient.SqlClient): PgListen | undefined =>
  "listen" in sql && "notify" in sql ? (sql as unknown as PgListen) : undefined

export const grantStoreLayer = Layer.effect(
  GrantStore,
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const lease = yield* HostLease
    const pg = asPg(sql)
    // Per session, the keys the database said yes to, and those it said no to (most calls have
    // no grant: without this, each of them asks the database). Only kept while a listener is
    // up: without one, another replica's grant or revocation could not reach this cache.
    const cache = new Map<string, Set<string>>()
    const misses = new Map<string, Set<string>>()
    let missCount = 0
    const forget = (sessionId: string) => {
      cache.delete(sessionId)
      missCount -= misses.get(sessionId)?.size ?? 0
      misses.delete(sessionId)
    }
    const forgetAll = () => {
      cache.clear()
      misses.clear()
      missCount = 0
    }
    let listening = false
    // Bumped by every drop of the cache: an answer the database gave before a drop it arrived
    // after (a revocation announced meanwhile) is not cached.
    let drops = 0
    if (pg !== undefined) {
      // Listen for as long as the layer lives; a lost connection drops the cache and listens again.
      const listenOnce = Effect.scoped(
        Effect.gen(function* () {
          const queue = yield* pg.listen(GRANTS_CHANNEL)
          listening = true
          drops++
          forgetAll()
          while (true) {
            const note = yield* Queue.take(queue)
            drops++
            forget(note.payload)
          }
        })
      ).pipe(
        Effect.ensuring(
          Effect.sync(() => {
            listening = false
            drops++
            forgetAll()
          })
        ),
        Effect.ignoreCause
      )
      yield* Effect.forkScoped(Effect.forever(Effect.andThen(listenOnce, Effect.sleep(200))))
    }
    const announce = (sessionId: string) =>
      pg === undefined ? Effect.void : Effect.ignore(pg.notify(GRANTS_CHANNEL, sessionId))
    // PostgreSQL's text cannot hold NUL, which the engine's keys use as a separator: keys are
    // stored as JSON strings, which escape it (and everything else) one to one.
    const stored = (key: string) => JSON.stringify(key)
    const has = (sessionId: string, key: string) =>
      Effect.suspend(() => {
        if (listening && cache.get(sessionId)?.has(key) === true) return Effect.succeed(true)
        if (listening && misses.get(sessionId)?.has(key) === true) return Effect.succeed(false)
        const asked = drops
        return sql<{
          one: number
        }>`SELECT 1 AS one FROM fc_grants WHERE session_id = ${sessionId} AND grant_key = ${stored(key)}`.pipe(
          Effect.map((rows) => {
            if (listening && drops === asked) {
              if (rows.length > 0) {
                const keys = cache.get(sessionId) ?? new Set<string>()
                cache.set(sessionId, keys)
                keys.add(key)
              } else {
                // Bounded: past the cap, the "no"s start over (each costs one query to learn again).
                if (missCount >= MISSES_KEPT) forgetAll()
                const keys = misses.get(sessionId) ?? new Set<string>()
                misses.set(sessionId, keys)
                if (!keys.has(key)) missCount++
                keys.add(key)
              }
            }
            return rows.length > 0
          }),
          // Fail closed: a grant that cannot be checked is not there, so the call asks.
          Effect.catchCause(() => Effect.succeed(false))
        )
      })
    return GrantStore.of({
      authoritative: true,
      has,
      add: (sessionId, key, display) =>
        sql`INSERT INTO fc_grants (session_id, grant_key, display, created_at)
          SELECT ${sessionId}, ${stored(key)}, ${display}, ${Date.now()} ${lease.held}
          ON CONFLICT (session_id, grant_key) DO UPDATE SET display = excluded.display RETURNING 1 AS ok`.pipe(
          Effect.flatMap(lease.expectHeld),
          // This replica's own "no" goes at once; the others' with the notification.
          Effect.andThen(
            Effect.sync(() => {
              drops++
              forget(sessionId)
            })
          ),
          Effect.andThen(announce(sessionId)),
          Effect.catchCause(failed("saving an approval"))
        ),
      revoke: (sessionId, key) =>
        lease.write(sql`DELETE FROM fc_grants WHERE session_id = ${sessionId} AND grant_key = ${stored(key)}`).pipe(
          Effect.andThen(
            Effect.sync(() => {
              drops++
              forget(sessionId)
            })
          ),
          Effect.andThen(announce(sessionId)),
          Effect.catchCause(failed("revoking an approval"))
        )
    })
  })
)

export const todoStoreLayer = Layer.effect(
  TodoStore,
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const lease = yield* HostLease
    return TodoStore.of({
      get: (sessionId) =>
        sql<{ todos: string }>`SELECT todos FROM fc_todos WHERE session_id = ${sessionId}`.pipe(
          Effect.map((rows) => (rows[0] === undefined ? [] : (JSON.parse(rows[0].todos) as ReadonlyArray<Todo>))),
          Effect.catchCause(failed("reading the todo list"))
        ),
      set: (sessionId, todos) =>
        sql`INSERT INTO fc_todos (session_id, todos, updated_at)
          SELECT ${sessionId}, ${JSON.stringify(todos)}, ${Date.now()} ${lease.held}
          ON CONFLICT (session_id) DO UPDATE SET todos = excluded.todos, updated_at = excluded.updated_at RETURNING 1 AS ok`.pipe(
          Effect.flatMap(lease.expectHeld),
          Effect.catchCause(failed("saving the todo list"))
        )
    })
  })
)

const decodeRecord = Schema.decodeUnknownOption(
  Schema.fromJsonString(
    Schema.Struct({
      command: Schema.String,
      startedAt: Schema.Number,
      hostPid: Schema.Number,
      hostToken: Schema.String,
      state: JobStateSchema,
      bytes: Schema.Number
    })
  )
)

export const jobRecordStoreLayer = Layer.effect(
  JobRecordStore,
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const lease = yield* HostLease
    return JobRecordStore.of({
      put: (r) => {
        const record = JSON.stringify({
          command: r.command,
          startedAt: r.startedAt,
          hostPid: r.hostPid,
          hostToken: r.hostToken,
          state: r.state,
          bytes: r.bytes
        })
        // A record already marked lost (its host was fenced) stays lost: the job is never run again.
        return sql`INSERT INTO fc_jobs (session_id, id, host_id, host_epoch, record, state, updated_at)
          SELECT ${r.sessionId}, ${r.id}, ${lease.hostId}, ${lease.epoch}, ${record}, ${r.state.state}, ${Date.now()} ${lease.held}
          ON CONFLICT (session_id, id) DO UPDATE SET record = excluded.record, state = excluded.state, updated_at = excluded.updated_at
          WHERE fc_jobs.state <> 'lost'`.pipe(Effect.asVoid, Effect.catchCause(failed("saving a job's record")))
      },
      list: (sessionId) =>
        sql<{
          id: string
          record: string
          state: string
        }>`SELECT id, record, state FROM fc_jobs WHERE session_id = ${sessionId} ORDER BY id`.pipe(
          Effect.map((rows) =>
            rows.flatMap((row): ReadonlyArray<JobRecord> => {
              const decoded = decodeRecord(row.record)
              if (Option.isNone(decoded)) return []
              const lost = row.state === "lost"
              return [
                {
                  sessionId,
                  id: row.id,
                  ...decoded.value,
                  state: lost
                    ? {
                        state: "killed",
                        signal: "none",
                        why: "the replica running it stopped, and it was not run again"
                      }
                    : decoded.value.state
                }
              ]
            })
          ),
          Effect.catchCause(failed("reading job records"))
        )
    })
  })
)
