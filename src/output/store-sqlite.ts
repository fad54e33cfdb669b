/**
 * The persistent OutputStore: the same service as the in-memory one (store.ts), with its entries
 * in the project's session database, so a resumed session still reads its older outputs with
 * `output` — in another process, after a restart. The rules are the same: a byte-LRU inside a
 * session-LRU for outputs kept in the database, and outputs past a session's budget spill to
 * files (under the project's state folder, owned by this store) with their own disk budget.
 */
import { randomUUID } from "node:crypto"
import { existsSync, mkdirSync, readdirSync, renameSync, rmdirSync, rmSync, statSync } from "node:fs"
import { dirname, join } from "node:path"
import type { DatabaseSync, SQLInputValue } from "node:sqlite"
import { Effect, FileSystem, Layer, Option } from "effect"
import { SessionStore, type SessionStoreShape } from "../session/store.ts"
import { makeCaptureWriter } from "./capture.ts"
import { OutputConfig, spillSettingsConfig } from "./config.ts"
import { makeWriter, type OutputWriter, spillPath } from "./spill.ts"
import { OutputStore, type PutRequest, type PutResult, SPILL_AFTER_BYTES, type StoredOutput } from "./store.ts"
import { countLines } from "./truncate.ts"

interface Row {
  readonly session_id: string
  readonly id: string
  readonly tool: string
  readonly text: string
  readonly chars: number
  readonly lines: number
  readonly bytes: number
  readonly file: string | null
  readonly head: string | null
  readonly tail: string | null
  readonly dropped_bytes: number | null
}

const toEntry = (row: Row): StoredOutput => ({
  sessionId: row.session_id,
  id: row.id,
  tool: row.tool,
  text: row.text,
  chars: row.chars,
  lines: row.lines,
  bytes: row.bytes,
  ...(row.file === null ? {} : { file: row.file, head: row.head ?? "", tail: row.tail ?? "" }),
  ...(row.dropped_bytes === null ? {} : { droppedBytes: row.dropped_bytes })
})

/** One clock for every LRU stamp, so the order holds across processes sharing the database. */
const tick = (db: DatabaseSync): number =>
  (db.prepare("UPDATE meta SET value = value + 1 WHERE key = 'clock' RETURNING value").get() as { value: number }).value

export interface SqliteStoreLimits {
  /** Bytes of outputs kept in the database per session (the byte-LRU). */
  readonly bytesPerSession: number
  /** Sessions whose outputs are kept (the session-LRU). */
  readonly sessions: number
  /** Bytes of spilled files across all sessions. */
  readonly spillBytes: number
  /** Characters of head and of tail kept for a spilled output. */
  readonly keepChars: number
}

/** Removes one row and its share of the byte counters; returns its file, if any. */
const removeRow = (db: DatabaseSync, sessionId: string, id: string): string | undefined => {
  const row = db
    .prepare("SELECT bytes, file, dropped_bytes FROM outputs WHERE session_id = ? AND id = ?")
    .get(sessionId, id) as { bytes: number; file: string | null; dropped_bytes: number | null } | undefined
  if (row === undefined) return undefined
  db.prepare("DELETE FROM outputs WHERE session_id = ? AND id = ?").run(sessionId, id)
  if (row.file === null) {
    db.prepare("UPDATE output_sessions SET bytes = bytes - ? WHERE id = ?").run(row.bytes, sessionId)
    return undefined
  }
  db.prepare("UPDATE meta SET value = value - ? WHERE key = 'disk_bytes'").run(row.bytes - (row.dropped_bytes ?? 0))
  return row.file
}

const counter = (db: DatabaseSync, sql: string, ...params: Array<SQLInputValue>): number =>
  (db.prepare(sql).get(...params) as { value: number } | undefined)?.value ?? 0

/**
 * Files an entry and applies the three budgets in one transaction; returns the files to remove
 * once it has committed (a file is removed only after no row names it).
 */
const fileEntry = (db: DatabaseSync, entry: StoredOutput, limits: SqliteStoreLimits): Array<string> => {
  const gone: Array<string> = []
  const drop = (sessionId: string, id: string) => {
    const file = removeRow(db, sessionId, id)
    if (file !== undefined) gone.push(file)
  }
  const now = tick(db)
  db.prepare(
    "INSERT INTO output_sessions (id, used) VALUES (?, ?) ON CONFLICT (id) DO UPDATE SET used = excluded.used"
  ).run(entry.sessionId, now)
  drop(entry.sessionId, entry.id)
  db.prepare(
    `INSERT INTO outputs (session_id, id, tool, chars, lines, bytes, file, dropped_bytes, used, head, tail, text)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`
  ).run(
    entry.sessionId,
    entry.id,
    entry.tool,
    entry.chars,
    entry.lines,
    entry.bytes,
    entry.file ?? null,
    entry.droppedBytes ?? null,
    now,
    entry.head ?? null,
    entry.tail ?? null,
    entry.text
  )
  if (entry.file === undefined) {
    db.prepare("UPDATE output_sessions SET bytes = bytes + ? WHERE id = ?").run(entry.bytes, entry.sessionId)
  } else {
    db.prepare("UPDATE meta SET value = value + ? WHERE key = 'disk_bytes'").run(
      entry.bytes - (entry.droppedBytes ?? 0)
    )
  }
  // The session-LRU: the least recently used sessions leave with all their outputs.
  const stale = db
    .prepare("SELECT id FROM output_sessions ORDER BY used DESC LIMIT -1 OFFSET ?")
    .all(limits.sessions) as Array<{ id: string }>
  for (const { id } of stale) {
    for (const row of db.prepare("SELECT id FROM outputs WHERE session_id = ?").all(id) as Array<{ id: string }>) {
      drop(id, row.id)
    }
    db.prepare("DELETE FROM output_sessions WHERE id = ?").run(id)
  }
  // The disk budget for spilled files, oldest first, across sessions (the newest always stays).
  while (counter(db, "SELECT value FROM meta WHERE key = 'disk_bytes'") > limits.spillBytes) {
    const oldest = db
      .prepare("SELECT session_id, id FROM outputs WHERE file IS NOT NULL ORDER BY used LIMIT 1")
      .get() as { session_id: string; id: string } | undefined
    if (oldest === undefined || (oldest.session_id === entry.sessionId && oldest.id === entry.id)) break
    drop(oldest.session_id, oldest.id)
  }
  // The byte-LRU: outputs held in the database count against their session's budget.
  while (
    counter(db, "SELECT bytes AS value FROM output_sessions WHERE id = ?", entry.sessionId) > limits.bytesPerSession
  ) {
    const oldest = db
      .prepare("SELECT id FROM outputs WHERE session_id = ? AND file IS NULL ORDER BY used LIMIT 1")
      .get(entry.sessionId) as { id: string } | undefined
    if (oldest === undefined) break
    drop(entry.sessionId, oldest.id)
  }
  return gone.filter((file) => file !== entry.file)
}

export const makeSqliteStore = (
  sessions: SessionStoreShape,
  fs: FileSystem.FileSystem,
  spillDir: string,
  limits: SqliteStoreLimits
): OutputStore["Service"] => {
  const spill = { fs, dir: spillDir, maxBytes: limits.spillBytes }
  const tooLarge = `it is larger than the per-session store (${limits.bytesPerSession} bytes)`

  const removeFiles = (paths: ReadonlyArray<string>) =>
    Effect.forEach(paths, (p) => Effect.ignore(fs.remove(p, { force: true })), { discard: true })

  /** Files an entry; a database failure is logged and the entry is not kept (a miss, never a crash). */
  const file = (entry: StoredOutput): Effect.Effect<PutResult> =>
    sessions
      .write((db) => fileEntry(db, entry, limits))
      .pipe(
        Effect.flatMap(removeFiles),
        Effect.as<PutResult>({ stored: true }),
        Effect.catch((e) =>
          Effect.logWarning(e.message).pipe(
            Effect.andThen(entry.file === undefined ? Effect.void : removeFiles([entry.file])),
            Effect.as<PutResult>({ stored: false, reason: e.message })
          )
        )
      )

  const open = (request: Omit<PutRequest, "text">): Effect.Effect<OutputWriter> =>
    makeWriter({
      request,
      memoryBytes: Math.min(limits.bytesPerSession, SPILL_AFTER_BYTES),
      keepChars: limits.keepChars,
      spill,
      file: (entry) => Effect.asVoid(file(entry)),
      tooLarge
    })

  const capture = (request: Omit<PutRequest, "text">, show: (text: string, offset: number) => Effect.Effect<void>) =>
    makeCaptureWriter({
      request,
      path: spillPath(spillDir, request.id),
      memoryBytes: Math.min(limits.bytesPerSession, SPILL_AFTER_BYTES),
      maxBytes: limits.spillBytes,
      keepChars: limits.keepChars,
      keepFile: true,
      file: (entry) => Effect.asVoid(file(entry)),
      tooLarge,
      show
    })

  return OutputStore.of({
    put: ({ sessionId, id, tool, text, lines }) =>
      Effect.gen(function* (): Effect.fn.Return<PutResult> {
        const bytes = Buffer.byteLength(text, "utf8")
        if (bytes > limits.bytesPerSession) {
          const writer = yield* open({ sessionId, id, tool })
          yield* writer.write(text)
          return (yield* writer.commit).result
        }
        return yield* file({ sessionId, id, tool, text, chars: text.length, lines: lines ?? countLines(text), bytes })
      }),
    open,
    capture,
    get: (sessionId, id) =>
      sessions
        .write((db) => {
          const row = db.prepare("SELECT * FROM outputs WHERE session_id = ? AND id = ?").get(sessionId, id) as
            | Row
            | undefined
          if (row === undefined) return Option.none<StoredOutput>()
          // A spilled file someone removed: forget the entry rather than point at nothing.
          if (row.file !== null && !existsSync(row.file)) {
            removeRow(db, sessionId, id)
            return Option.none<StoredOutput>()
          }
          const now = tick(db)
          db.prepare("UPDATE output_sessions SET used = ? WHERE id = ?").run(now, sessionId)
          db.prepare("UPDATE outputs SET used = ? WHERE session_id = ? AND id = ?").run(now, sessionId, id)
          return Option.some(toEntry(row))
        })
        .pipe(Effect.orDie),
    ids: (sessionId) =>
      sessions
        .read((db) =>
          (
            db.prepare("SELECT id FROM outputs WHERE session_id = ? ORDER BY used").all(sessionId) as Array<{
              id: string
            }>
          ).map((row) => row.id)
        )
        .pipe(Effect.orDie)
  })
}

/** A spill file this old that no row names was left by a process killed before it committed. */
export const ORPHAN_AGE_MS = 24 * 60 * 60 * 1000

/**
 * Removes spilled files no row names (a process killed mid-output), and empty folders, once
 * they are older than ORPHAN_AGE_MS: a younger one may be an output another process is still
 * writing. Returns how many files it removed.
 */
export const sweepOrphans = (sessions: SessionStoreShape, now = Date.now()): Effect.Effect<number> =>
  Effect.gen(function* () {
    const root = join(sessions.dir, "outputs")
    const named = new Set(
      (yield* sessions.read(
        (db) => db.prepare("SELECT file FROM outputs WHERE file IS NOT NULL").all() as Array<{ file: string }>
      )).map((r) => r.file)
    )
    let removed = 0
    const old = (path: string) => {
      try {
        return now - statSync(path).mtimeMs > ORPHAN_AGE_MS
      } catch {
        return false
      }
    }
    for (const folder of readdirSync(root)) {
      const dir = join(root, folder)
      for (const name of readdirSync(dir)) {
        const file = join(dir, name)
        if (!named.has(file) && old(file)) {
          rmSync(file, { force: true })
          removed++
        }
      }
      if (readdirSync(dir).length === 0 && old(dir)) rmdirSync(dir)
    }
    return removed
  }).pipe(
    // Housekeeping: a failure here must never stop the store from opening.
    Effect.catchCause(() => Effect.succeed(0))
  )

/**
 * Makes this process's spill folder. Something that is not a folder where `outputs` should be
 * (a damaged state folder) is moved aside and the person told; a folder that still cannot be
 * made is said on the log, and outputs too large for the database are then not kept — the
 * store opens either way, since most calls never spill.
 */
const makeSpillDir = (spillDir: string): Effect.Effect<void> =>
  Effect.suspend(() => {
    const outputs = dirname(spillDir)
    let notice: string | undefined
    try {
      if (existsSync(outputs) && !statSync(outputs).isDirectory()) {
        const aside = `${outputs}.damaged-${new Date().toISOString().replace(/[:.]/g, "-")}`
        renameSync(outputs, aside)
        notice = `${outputs} was not a folder; it was moved to ${aside} and a fresh one made. Delete ${aside} once you no longer want it.`
      }
      mkdirSync(spillDir, { recursive: true })
    } catch (e) {
      notice = `cannot make the output folder ${spillDir} (${(e as Error).message}); outputs too large for the session database are not kept. Make ${outputs} a writable folder.`
    }
    return notice === undefined ? Effect.void : Effect.logWarning(notice)
  })

/**
 * OutputStore on the SessionStore, sized by OutputConfig and FREECODE_OUTPUT_SPILL_BYTES. This
 * process's spilled files go to `<project state>/outputs/<random>/`; an empty one is removed
 * when the layer is released. Opening sweeps files left by killed processes (sweepOrphans).
 */
export const layerSqliteOutputStore = Layer.effect(
  OutputStore,
  Effect.gen(function* () {
    const config = yield* OutputConfig
    const { spillBytes } = yield* spillSettingsConfig
    const fs = yield* FileSystem.FileSystem
    const sessions = yield* SessionStore
    yield* sweepOrphans(sessions)
    const spillDir = join(sessions.dir, "outputs", randomUUID())
    yield* Effect.acquireRelease(makeSpillDir(spillDir), () =>
      Effect.sync(() => {
        try {
          rmdirSync(spillDir) // only when empty: its files belong to entries other processes may read
        } catch {}
      })
    )
    return makeSqliteStore(sessions, fs, spillDir, {
      bytesPerSession: config.storeBytes,
      sessions: config.storeSessions,
      spillBytes,
      keepChars: Math.max(config.maxChars, config.uiMaxChars)
    })
  })
)
