/**
 * The session database: one SQLite file per project (node:sqlite, built into Node; no native
 * addon), in WAL mode with synchronous=NORMAL, its schema brought up to date when opened.
 * Stores (outputs, todos) keep their rows here; every write runs in one transaction, so a killed
 * process never leaves half a record.
 */
import { mkdirSync } from "node:fs"
import { join } from "node:path"
import type { DatabaseSync } from "node:sqlite"
import { type Config, Context, Effect, Layer, Schema } from "effect"
import { projectStateDir, STATE_DIR_NAME, stateDirConfig } from "./location.ts"
import { migrations as allMigrations } from "./migrations.ts"

/** A database that cannot be opened or written: always names the file and what to do. */
export class SessionStoreError extends Schema.TaggedError<SessionStoreError>()("SessionStoreError", {
  file: Schema.String,
  message: Schema.String
}) {}

export interface SessionStoreOptions {
  /** The project root; its state folder is derived from it. */
  readonly root: string
  /** The state folder (default: FREECODE_STATE_DIR, $XDG_STATE_HOME/freecode-tools, ~/.local/state/freecode-tools). */
  readonly stateDir?: string
  /** How long a write waits for another process's write before failing (default 5,000 ms). */
  readonly busyTimeoutMs?: number
}

export interface SessionStoreShape {
  /** The database file. */
  readonly file: string
  /** The project's state folder (holds the database and the files the stores own). */
  readonly dir: string
  /** Runs `f` against the database (reads only). */
  readonly read: <A>(f: (db: DatabaseSync) => A) => Effect.Effect<A, SessionStoreError>
  /** Runs `f` in one write transaction: all of it is committed, or none of it. */
  readonly write: <A>(f: (db: DatabaseSync) => A) => Effect.Effect<A, SessionStoreError>
}

/** Turns SQLite's message into one that names the file and says what to do. */
export const describeSqliteError = (file: string, error: unknown): SessionStoreError => {
  const text = error instanceof Error ? error.message : String(error)
  const code = (error as { errcode?: number }).errcode
  // SQLITE_BUSY (5) and SQLITE_LOCKED (6), possibly extended (code & 0xff).
  const base = typeof code === "number" ? code & 0xff : undefined
  if (base === 5 || base === 6 || /database is locked|busy/i.test(text)) {
    return new SessionStoreError({
      file,
      message: `the session database ${file} is locked by another process (${text}). Wait for it to finish, or stop the other freecode-tools process using this project.`
    })
  }
  if (base === 26 || base === 11 || /not a database|malformed|corrupt/i.test(text)) {
    return new SessionStoreError({
      file,
      message: `the session database ${file} is corrupt (${text}). Move it aside (its saved outputs and todos are lost) and run again; a new one is created.`
    })
  }
  return new SessionStoreError({ file, message: `the session database ${file} failed: ${text}` })
}

/** Brings the database up to the newest schema, one transaction per migration. */
const migrate = (db: DatabaseSync, file: string, migrations: ReadonlyArray<string>): void => {
  const row = db.prepare("PRAGMA user_version").get() as { user_version: number }
  const version = row.user_version
  if (version > migrations.length) {
    throw new SessionStoreError({
      file,
      message: `the session database ${file} has schema version ${version}, newer than this freecode-tools understands (${migrations.length}). Upgrade freecode-tools, or set ${STATE_DIR_NAME} to use another state folder.`
    })
  }
  for (let next = version; next < migrations.length; next++) {
    db.exec("BEGIN IMMEDIATE")
    try {
      db.exec(migrations[next]!)
      db.exec(`PRAGMA user_version = ${next + 1}`)
      db.exec("COMMIT")
    } catch (e) {
      db.exec("ROLLBACK")
      throw e
    }
  }
}

/** Opens (creating if needed) and migrates a database file; the caller closes it. */
export const openDatabase = (
  file: string,
  options: { readonly busyTimeoutMs?: number; readonly migrations?: ReadonlyArray<string> } = {}
): Effect.Effect<DatabaseSync, SessionStoreError> =>
  Effect.try({
    try: () => {
      // Loaded when a database is opened, not imported: an import of node:sqlite fails at link time on
      // a Node without it, before the package's version check can say so in one line.
      const { DatabaseSync } = process.getBuiltinModule("node:sqlite")
      const db = new DatabaseSync(file, { timeout: options.busyTimeoutMs ?? 5_000 })
      try {
        // journal_mode is the first statement to read the file: a corrupt file fails here.
        db.exec("PRAGMA journal_mode = WAL")
        db.exec("PRAGMA synchronous = NORMAL")
        migrate(db, file, options.migrations ?? allMigrations)
        return db
      } catch (e) {
        db.close()
        throw e
      }
    },
    catch: (e) => (e instanceof SessionStoreError ? e : describeSqliteError(file, e))
  })

export const makeSessionStore = (db: DatabaseSync, file: string, dir: string): SessionStoreShape => ({
  file,
  dir,
  read: (f) =>
    Effect.try({
      try: () => f(db),
      catch: (e) => describeSqliteError(file, e)
    }),
  write: (f) =>
    Effect.try({
      try: () => {
        // IMMEDIATE takes the write lock up front, so a busy database fails here, before any work.
        db.exec("BEGIN IMMEDIATE")
        try {
          const result = f(db)
          db.exec("COMMIT")
          return result
        } catch (e) {
          if (db.isTransaction) db.exec("ROLLBACK")
          throw e
        }
      },
      catch: (e) => describeSqliteError(file, e)
    })
})

export class SessionStore extends Context.Service<SessionStore, SessionStoreShape>()("freecode/SessionStore") {
  /**
   * Opens the project's database (`<state>/projects/<name>-<hash>/sessions.db`) for the layer's
   * lifetime. A database that cannot be opened fails the layer with a SessionStoreError.
   */
  static readonly layer = (
    options: SessionStoreOptions
  ): Layer.Layer<SessionStore, SessionStoreError | Config.ConfigError> =>
    Layer.effect(
      SessionStore,
      Effect.gen(function* () {
        const stateDir = options.stateDir ?? (yield* stateDirConfig)
        const dir = projectStateDir(stateDir, options.root)
        const file = join(dir, "sessions.db")
        yield* Effect.try({
          try: () => mkdirSync(dir, { recursive: true }),
          catch: (e) =>
            new SessionStoreError({
              file,
              message: `cannot create the state folder ${dir} (${(e as Error).message}). Set ${STATE_DIR_NAME} to a writable folder.`
            })
        })
        const db = yield* Effect.acquireRelease(
          openDatabase(file, options.busyTimeoutMs === undefined ? {} : { busyTimeoutMs: options.busyTimeoutMs }),
          (db) => Effect.sync(() => db.close())
        )
        return SessionStore.of(makeSessionStore(db, file, dir))
      })
    )
}

/**
 * Whether a tool system built without an explicit `sessions` option keeps its sessions in the
 * project's database. The CLI sets it when `--session ID` names a session to resume; without it
 * the session id is fresh and random, so nothing could ever read the saved state back.
 */
export const SessionPersistence = Context.Reference<{ readonly persist: boolean }>("freecode/SessionPersistence", {
  defaultValue: () => ({ persist: false })
})
