/**
 * The OutputStore shared by replicas: every output this replica stores is kept by the local store
 * it wraps (memory, spilling to files, as store.ts) and copied to the shared store in chunks of
 * CHUNK_BYTES, in one transaction under this replica's lease, so a 100 MB output is neither one
 * row nor one message. A read finds the local copy first; another replica's output is read back
 * from its chunks (into memory when small, into a file this store owns when large). The byte
 * budget per session is kept when an output is added, never on a read.
 */
import { randomUUID } from "node:crypto"
import { closeSync, mkdirSync, openSync, readSync, rmSync, writeSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect, Layer, Option } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import { OutputConfig } from "../output/config.ts"
import type { OutputWriter } from "../output/spill.ts"
import { OutputStore, type StoredOutput } from "../output/store.ts"
import { countLines } from "../output/truncate.ts"
import { HostLease } from "./host-lease.ts"

/** Bytes of one stored chunk (one row, one message). */
export const CHUNK_BYTES = 512 * 1024
/** How many outputs this replica stores between two trims of a session to its byte budget. */
const TRIM_EVERY = 32
/** Outputs up to this size are read back into memory; larger ones into a file. */
const IN_MEMORY_BYTES = 4 * 1024 * 1024

const utf8 = new TextDecoder("utf-8")
const encoder = new TextEncoder()

export const outputStoreLayer = Layer.effect(
  OutputStore,
  Effect.gen(function* () {
    const local = yield* OutputStore
    const sql = yield* SqlClient.SqlClient
    const lease = yield* HostLease
    const config = yield* OutputConfig
    const keepChars = Math.max(config.maxChars, config.uiMaxChars)
    const cacheDir = join(tmpdir(), `freecode-shared-outputs-${randomUUID()}`)
    yield* Effect.addFinalizer(() => Effect.sync(() => rmSync(cacheDir, { recursive: true, force: true })))

    // Chunks first, each written with the lease check, then the row that makes the output
    // visible: a reader never sees a half-written output, and no transaction holds a connection
    // across the chunks. Every TRIM_EVERY outputs the session is brought back within its budget.
    let puts = 0
    const share = (
      meta: { sessionId: string; id: string; tool: string; chars: number; lines: number; bytes: number },
      pieces: () => Iterable<Uint8Array>
    ) =>
      Effect.gen(function* () {
        let seq = 0
        for (const piece of pieces()) {
          yield* sql`INSERT INTO fc_output_chunks (session_id, id, seq, data)
            SELECT ${meta.sessionId}, ${meta.id}, ${seq++}, ${piece} ${lease.held}
            ON CONFLICT (session_id, id, seq) DO UPDATE SET data = excluded.data RETURNING 1 AS ok`.pipe(
            Effect.flatMap(lease.expectHeld)
          )
        }
        yield* sql`INSERT INTO fc_outputs (session_id, id, tool, chars, lines, bytes, chunks, created_at)
          SELECT ${meta.sessionId}, ${meta.id}, ${meta.tool}, ${meta.chars}, ${meta.lines}, ${meta.bytes}, ${seq}, ${Date.now()} ${lease.held}
          ON CONFLICT (session_id, id) DO UPDATE SET tool = excluded.tool, chars = excluded.chars, lines = excluded.lines,
            bytes = excluded.bytes, chunks = excluded.chunks, created_at = excluded.created_at RETURNING 1 AS ok`.pipe(
          Effect.flatMap(lease.expectHeld)
        )
        if (++puts % TRIM_EVERY === 0) yield* lease.write(trim(meta.sessionId))
      }).pipe(
        // The local copy is there either way: a shared store that fails loses only other
        // replicas' view of this output, which then reads as a miss ("re-run the tool").
        Effect.catchCause((cause) =>
          Effect.logWarning(`an output could not be shared: ${String(cause).split("\n")[0]}`)
        )
      )

    /** Keeps a session's shared outputs within the byte budget, oldest out first. */
    const trim = Effect.fnUntraced(function* (sessionId: string) {
      const rows = yield* sql<{ id: string; bytes: number | string }>`SELECT id, bytes FROM fc_outputs
          WHERE session_id = ${sessionId} ORDER BY created_at DESC, id DESC`
      let total = 0
      const drop: Array<string> = []
      for (const row of rows) {
        total += Number(row.bytes)
        if (total > config.storeBytes) drop.push(row.id)
      }
      if (drop.length === 0) return
      yield* sql`DELETE FROM fc_output_chunks WHERE session_id = ${sessionId} AND id IN ${sql.in(drop)}`
      yield* sql`DELETE FROM fc_outputs WHERE session_id = ${sessionId} AND id IN ${sql.in(drop)}`
    })

    const chunksOf = function* (bytes: Uint8Array): Iterable<Uint8Array> {
      for (let at = 0; at < bytes.length || at === 0; at += CHUNK_BYTES) {
        yield bytes.subarray(at, at + CHUNK_BYTES)
        if (bytes.length === 0) return
      }
    }
    const fileChunks = (file: string) =>
      function* (): Iterable<Uint8Array> {
        const fd = openSync(file, "r")
        try {
          while (true) {
            const buffer = new Uint8Array(CHUNK_BYTES)
            const n = readSync(fd, buffer, 0, CHUNK_BYTES, null)
            if (n === 0) return
            yield buffer.subarray(0, n)
          }
        } finally {
          closeSync(fd)
        }
      }

    /** After the local store filed an output, the same bytes go to the shared store. */
    const shareStored = (sessionId: string, id: string) =>
      Effect.flatMap(local.get(sessionId, id), (found) => {
        if (Option.isNone(found)) return Effect.void
        const o = found.value
        const meta = { sessionId, id, tool: o.tool, chars: o.chars, lines: o.lines, bytes: o.bytes }
        return o.file === undefined
          ? share(meta, () => chunksOf(encoder.encode(o.text)))
          : share(meta, fileChunks(o.file))
      })

    const wrap = <W extends OutputWriter>(writer: W, sessionId: string, id: string): W => ({
      ...writer,
      commit: Effect.tap(writer.commit, () => shareStored(sessionId, id))
    })

    /** Another replica's output, read back from its chunks. */
    const fetchShared = (sessionId: string, id: string): Effect.Effect<Option.Option<StoredOutput>> =>
      Effect.gen(function* () {
        const rows = yield* sql<{
          tool: string
          chars: number | string
          lines: number | string
          bytes: number | string
          chunks: number | string
        }>`
          SELECT tool, chars, lines, bytes, chunks FROM fc_outputs WHERE session_id = ${sessionId} AND id = ${id}`
        const row = rows[0]
        if (row === undefined) return Option.none()
        const base = {
          sessionId,
          id,
          tool: row.tool,
          chars: Number(row.chars),
          lines: Number(row.lines),
          bytes: Number(row.bytes)
        }
        const chunks = Number(row.chunks)
        const piece = (seq: number) =>
          Effect.map(
            sql<{
              data: Uint8Array
            }>`SELECT data FROM fc_output_chunks WHERE session_id = ${sessionId} AND id = ${id} AND seq = ${seq}`,
            (r) => r[0]?.data ?? new Uint8Array()
          )
        if (base.bytes <= IN_MEMORY_BYTES) {
          const parts: Array<Uint8Array> = []
          for (let seq = 0; seq < chunks; seq++) parts.push(yield* piece(seq))
          return Option.some({ ...base, text: utf8.decode(Buffer.concat(parts)) })
        }
        mkdirSync(cacheDir, { recursive: true })
        const file = join(cacheDir, `${randomUUID()}.out`)
        const fd = openSync(file, "w")
        let head = ""
        let last: Uint8Array = new Uint8Array()
        try {
          for (let seq = 0; seq < chunks; seq++) {
            const data = yield* piece(seq)
            writeSync(fd, data)
            if (seq === 0) head = utf8.decode(data).slice(0, keepChars)
            last = data
          }
        } finally {
          closeSync(fd)
        }
        const tail = utf8.decode(last).slice(-keepChars)
        return Option.some({ ...base, text: "", file, head, tail })
      }).pipe(
        Effect.catchCause((cause) =>
          Effect.as(
            Effect.logWarning(`a shared output could not be read: ${String(cause).split("\n")[0]}`),
            Option.none()
          )
        )
      )

    return OutputStore.of({
      put: (request) =>
        Effect.tap(local.put(request), (result) => {
          if (!result.stored) return Effect.void
          const bytes = encoder.encode(request.text)
          return share(
            {
              sessionId: request.sessionId,
              id: request.id,
              tool: request.tool,
              chars: request.text.length,
              lines: request.lines ?? countLines(request.text),
              bytes: bytes.length
            },
            () => chunksOf(bytes)
          )
        }),
      open: (request) => Effect.map(local.open(request), (w) => wrap(w, request.sessionId, request.id)),
      capture: (request, show) =>
        Effect.map(local.capture(request, show), (w) => wrap(w, request.sessionId, request.id)),
      get: (sessionId, id) =>
        Effect.flatMap(local.get(sessionId, id), (found) =>
          Option.isSome(found) ? Effect.succeed(found) : fetchShared(sessionId, id)
        ),
      ids: (sessionId) =>
        sql<{ id: string }>`SELECT id FROM fc_outputs WHERE session_id = ${sessionId} ORDER BY created_at, id`.pipe(
          Effect.map((rows) => rows.map((r) => r.id)),
          Effect.catchCause(() => local.ids(sessionId))
        )
    })
  })
)
