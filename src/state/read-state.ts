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
import {
  type FileSnapshot,
  type FileView,
  ReadState,
  type ReadWindow,
  type RecordedBy
} from "../read-state/read-state.ts"
import { HostLease } from "./host-lease.ts"
import { makePathLock } from "./path-lock.ts"

const Stored = Schema.Struct({
  size: Schema.Number,
  hash: Schema.String,
  lines: Schema.optional(Schema.String),
  mtimeMs: Schema.optional(Schema.Number),
  by: Schema.Literals(["read", "edit", "write", "apply_patch"]),
  known: Schema.Boolean,
  /** For a read: the call that showed it and its window, so another replica can point to it. */
  call: Schema.optional(Schema.String),
  offset: Schema.optional(Schema.Number),
  limit: Schema.optional(Schema.Number)
})
const decodeStored = Schema.decodeUnknownOption(Schema.fromJsonString(Stored))

const encode = (
  view: FileView,
  by: RecordedBy,
  known: boolean,
  read?: { readonly callId: string; readonly window: ReadWindow }
): string =>
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
    known,
    ...(read === undefined ? {} : { call: read.callId, offset: read.window.offset, limit: read.window.limit })
  })

type Decoded = FileSnapshot & { readonly read?: { readonly callId: string; readonly window: ReadWindow } }

const decode = (text: string): Decoded | undefined =>
  Option.match(decodeStored(text), {
    onNone: () => undefined,
    onSome: (s) => {
      const bytes = s.lines === undefined ? undefined : Buffer.from(s.lines, "base64")
      const lines =
        bytes === undefined
          ? undefined
          : new Uint32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength))
      const fingerprint: Fingerprint = { size: s.size, hash: s.hash, lines }
      const read =
        s.call === undefined || s.offset === undefined || s.limit === undefined
          ? {}
          : { read: { callId: s.call, window: { offset: s.offset, limit: s.limit } } }
      return { fingerprint, mtimeMs: s.mtimeMs, by: s.by, known: s.known, ...read }
    }
  })

export const readStateLayer = Layer.effect(
  ReadState,
  Effect.gen(function* () {
    const local = yield* ReadState
    const sql = yield* SqlClient.SqlClient
    const lease = yield* HostLease
    const workspace = lease.workspace
    const withPathLock = yield* makePathLock(workspace)
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
    const stored = (sessionId: string, path: string) =>
      sql<{
        record: string
      }>`SELECT record FROM fc_read_state WHERE workspace = ${workspace} AND session_id = ${sessionId} AND path = ${path}`.pipe(
        Effect.map((rows) => (rows[0] === undefined ? undefined : decode(rows[0].record)))
      )
    return ReadState.of({
      ...local,
      // This replica's own reads first; else the session's last read of the file, wherever it
      // was served, when it showed exactly these lines of exactly this content.
      findDuplicate: (sessionId, path, window, view) =>
        !local.dedup
          ? Effect.succeed(undefined)
          : Effect.flatMap(local.findDuplicate(sessionId, path, window, view), (mine) =>
              mine !== undefined
                ? Effect.succeed(mine)
                : stored(sessionId, path).pipe(
                    Effect.map((s) =>
                      s?.read !== undefined &&
                      s.read.window.offset === window.offset &&
                      s.read.window.limit === window.limit &&
                      s.mtimeMs === view.mtimeMs &&
                      s.fingerprint.size === view.fingerprint.size &&
                      s.fingerprint.hash === view.fingerprint.hash
                        ? s.read.callId
                        : undefined
                    ),
                    Effect.orElseSucceed(() => undefined)
                  )
            ),
      recordRead: (sessionId, callId, path, window, view) =>
        Effect.andThen(
          local.recordRead(sessionId, callId, path, window, view),
          put(sessionId, path, encode(view, "read", true, { callId, window }))
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
      // A read pruned from the conversation is no longer a copy to point to, on any replica.
      markReadPruned: (sessionId, callId) =>
        Effect.andThen(
          local.markReadPruned(sessionId, callId),
          sql<{ path: string; record: string }>`SELECT path, record FROM fc_read_state
            WHERE workspace = ${workspace} AND session_id = ${sessionId} AND record LIKE ${`%${JSON.stringify(callId)}%`}`.pipe(
            Effect.flatMap((rows) =>
              Effect.forEach(rows, (row) => {
                const s = decode(row.record)
                return s?.read?.callId === callId ? put(sessionId, row.path, encode(s, s.by, s.known)) : Effect.void
              })
            ),
            Effect.ignoreCause
          )
        ),
      // Every replica's writes of one file in one workspace, one after the other (path-lock.ts).
      withPathLock,
      lastSeen: (sessionId, path) =>
        stored(sessionId, path).pipe(
          Effect.map((s) =>
            s === undefined ? undefined : { fingerprint: s.fingerprint, mtimeMs: s.mtimeMs, by: s.by, known: s.known }
          ),
          Effect.catchCause(() => local.lastSeen(sessionId, path))
        )
    })
  })
)
