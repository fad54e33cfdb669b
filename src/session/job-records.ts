/**
 * The minimal record of each background job a session started, kept in the session database.
 * A job never outlives the process that ran it; the record is how a resumed session (another
 * process, `--session ID`) learns which of its jobs ended and in what state they were last seen.
 */
import { Context, Effect, Layer, Option, Schema } from "effect"
import { SessionStore } from "./store.ts"

/** A job's state as the jobs layer reports it, and as it is stored. */
export const JobStateSchema = Schema.Union([
  Schema.Struct({ state: Schema.Literal("running") }),
  Schema.Struct({ state: Schema.Literal("exited"), code: Schema.Number }),
  Schema.Struct({ state: Schema.Literal("killed"), signal: Schema.String, why: Schema.String })
])
export type JobState = typeof JobStateSchema.Type

export interface JobRecord {
  readonly sessionId: string
  readonly id: string
  readonly command: string
  readonly startedAt: number
  /** The process that ran the job, and which tool system in it (several can share a process). */
  readonly hostPid: number
  readonly hostToken: string
  /** The last state the host saw: "running" when it died before it could say more (SIGKILL). */
  readonly state: JobState
  /** Bytes of output when last seen. */
  readonly bytes: number
}

interface Row {
  id: string
  command: string
  started_at: number
  host_pid: number
  host_token: string
  state: string
  bytes: number
}

const decodeState = Schema.decodeUnknownOption(Schema.fromJsonString(JobStateSchema))

/** A row's state, or a plain "unknown" one for a row this version cannot read (never a crash). */
const stateOf = (text: string): JobState =>
  Option.getOrElse(decodeState(text), () => ({
    state: "killed" as const,
    signal: "none",
    why: "its recorded state could not be read"
  }))

export class JobRecordStore extends Context.Service<
  JobRecordStore,
  {
    /** Writes a job's record, replacing the earlier one. */
    readonly put: (record: JobRecord) => Effect.Effect<void>
    /** The session's job records, oldest first. */
    readonly list: (sessionId: string) => Effect.Effect<ReadonlyArray<JobRecord>>
  }
>()("freecode/JobRecordStore") {
  /** In the session database; a database failing mid-session is a defect, as for TodoStore. */
  static readonly layerSqlite = Layer.effect(
    JobRecordStore,
    Effect.gen(function* () {
      const store = yield* SessionStore
      return JobRecordStore.of({
        put: (r) =>
          store
            .write((db) => {
              db.prepare(
                `INSERT INTO jobs (session_id, id, command, started_at, host_pid, host_token, state, bytes)
                 VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                 ON CONFLICT (session_id, id) DO UPDATE SET state = excluded.state, bytes = excluded.bytes`
              ).run(r.sessionId, r.id, r.command, r.startedAt, r.hostPid, r.hostToken, JSON.stringify(r.state), r.bytes)
            })
            .pipe(Effect.orDie),
        list: (sessionId) =>
          store
            .read((db) =>
              (
                db
                  .prepare(
                    "SELECT id, command, started_at, host_pid, host_token, state, bytes FROM jobs WHERE session_id = ? ORDER BY started_at, id"
                  )
                  .all(sessionId) as unknown as ReadonlyArray<Row>
              ).map(
                (row): JobRecord => ({
                  sessionId,
                  id: row.id,
                  command: row.command,
                  startedAt: row.started_at,
                  hostPid: row.host_pid,
                  hostToken: row.host_token,
                  state: stateOf(row.state),
                  bytes: row.bytes
                })
              )
            )
            .pipe(Effect.orDie)
      })
    })
  )
}
