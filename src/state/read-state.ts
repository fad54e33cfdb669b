/**
 * What a session last knew each file to hold, shared by replicas: the stale-file check of a call
 * served by one replica sees what a call served by another read or wrote. Each record is written
 * through to the shared store (keyed by workspace, session and path) under this replica's lease;
 * `lastSeen` asks the store, and falls back to this replica's own records when the store cannot
 * answer. Read de-duplication and pruning stay per replica: they are about one conversation's
 * copies, which the client's own history holds.
 */
import { Effect, Layer, Option, Schema } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import type { Fingerprint } from "../read-state/fingerprint.ts"
import { type FileSnapshot, type FileView, ReadState, type RecordedBy } from "../read-state/read-state.ts"
import { HostLease } from "./host-lease.ts"

const Stored = Schema.Struct({
  size: Schema.Number,
  hash: Schema.String,
  lines: Schema.optional(Schema.String),
  mtimeMs: Schema.optional(Schema.Number),
  by: Schema.Literals(["read", "edit", "write", "apply_patch"]),
  known: Schema.Boolean
})
const decodeStored = Schema.decodeUnknownOption(Schema.fromJsonString(Stored))

const encode = (view: FileView, by: RecordedBy, known: boolean): string =>
  JSON.stringify({
    size: view.fingerprint.size,
    hash: view.fingerprint.hash,
    ...(view.fingerprint.lines === undefined
      ? {}
      : {
          lines: Buffer.from(
            view.fingerprint.lines.buffer,
            view.fingerprint.lines.byteOffset,
            view.fingerprint.lines.byteLength
          ).toString("base64")
        }),
    ...(view.mtimeMs === undefined ? {} : { mtimeMs: view.mtimeMs }),
    by,
    known
  })

const decode = (text: string): FileSnapshot | undefined =>
  Option.match(decodeStored(text), {
    onNone: () => undefined,
    onSome: (s) => {
      const bytes = s.lines === undefined ? undefined : Buffer.from(s.lines, "base64")
      const lines =
        bytes === undefined
          ? undefined
          : new Uint32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength))
      const fingerprint: Fingerprint = { size: s.size, hash: s.hash, lines }
      return { fingerprint, mtimeMs: s.mtimeMs, by: s.by, known: s.known }
    }
  })

export const readStateLayer = Layer.effect(
  ReadState,
  Effect.gen(function* () {
    const local = yield* ReadState
    const sql = yield* SqlClient.SqlClient
    const lease = yield* HostLease
    const workspace = lease.workspace
    const put = (sessionId: string, path: string, record: string) =>
      sql`INSERT INTO fc_read_state (workspace, session_id, path, record, updated_at)
        SELECT ${workspace}, ${sessionId}, ${path}, ${record}, ${Date.now()} ${lease.held}
        ON CONFLICT (workspace, session_id, path) DO UPDATE SET record = excluded.record, updated_at = excluded.updated_at
        RETURNING 1 AS ok`.pipe(
        Effect.flatMap(lease.expectHeld),
        Effect.catchCause((cause) =>
          Effect.logWarning(`a read record could not be shared: ${String(cause).split("\n")[0]}`)
        )
      )
    return ReadState.of({
      ...local,
      recordRead: (sessionId, callId, path, window, view) =>
        Effect.andThen(
          local.recordRead(sessionId, callId, path, window, view),
          put(sessionId, path, encode(view, "read", true))
        ),
      recordWrite: (sessionId, path, view, by, known) =>
        Effect.andThen(
          local.recordWrite(sessionId, path, view, by, known),
          put(sessionId, path, encode(view, by, known))
        ),
      forget: (sessionId, path) =>
        Effect.andThen(
          local.forget(sessionId, path),
          lease
            .write(
              sql`DELETE FROM fc_read_state WHERE workspace = ${workspace} AND session_id = ${sessionId} AND path = ${path}`
            )
            .pipe(Effect.ignoreCause)
        ),
      // In-process for now: replicas do not yet serialize one file's writes (a PostgreSQL
      // advisory lock per workspace and path will).
      withPathLock: local.withPathLock,
      lastSeen: (sessionId, path) =>
        sql<{
          record: string
        }>`SELECT record FROM fc_read_state WHERE workspace = ${workspace} AND session_id = ${sessionId} AND path = ${path}`.pipe(
          Effect.map((rows) => (rows[0] === undefined ? undefined : decode(rows[0].record))),
          Effect.catchCause(() => local.lastSeen(sessionId, path))
        )
    })
  })
)
