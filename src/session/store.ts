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
import { inodeOf, isBusy, isDamaged, lockHolders, moveAside } from "./damage.ts"
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
export const describeSqliteError = (file: string, error: unknown, busyTimeoutMs = 5_000): SessionStoreError => {
  const text = error instanceof Error ? error.message : String(error)
  if (isBusy(error)) {
    const holders = lockHolders([file, `${file}-shm`, `${file}-wal`])
    const who = holders.length > 0 ? `another process (${holders.join(", ")})` : "another process"
    return new SessionStoreError({
      file,
      message: `the session database ${file} is busy: ${who} holds its lock and did not release it within ${busyTimeoutMs / 1000} s (${text}). Wait for it to finish and try again, or stop that process; calls that do not need saved state still work.`
    })
  }
  if (isDamaged(error)) {
    return new SessionStoreError({
      file,
      message: `the session database ${file} is damaged (${text}). Move it aside (its saved outputs, todos and approvals are lost) and run again; a new one is created.`
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

interface OpenOptions {
  readonly busyTimeoutMs?: number
  readonly migrations?: ReadonlyArray<string>
}

/** Opens (creating if needed) and migrates a database file, throwing SQLite's own error. */
const openDatabaseSync = (file: string, options: OpenOptions): DatabaseSync => {
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
}

/** Opens (creating if needed) and migrates a database file; the caller closes it. */
export const openDatabase = (file: string, options: OpenOptions = {}): Effect.Effect<DatabaseSync, SessionStoreError> =>
  Effect.try({
    try: () => openDatabaseSync(file, options),
    catch: (e) => (e instanceof SessionStoreError ? e : describeSqliteError(file, e, options.busyTimeoutMs))
  })

/** What the store says when it moved a damaged file aside and started a fresh one. */
const movedAsideNotice = (file: string, aside: string, error: unknown) =>
  `the session database ${file} was damaged (${error instanceof Error ? error.message : String(error)}); it was moved to ${aside} and a fresh one started, so earlier saved outputs, todos and approvals are gone. Nothing to do; delete ${aside} once you no longer want to inspect it.`

export interface SessionStoreRecovery {
  /** Opens the file afresh (after a damaged one was moved aside). */
  readonly reopen: () => DatabaseSync
  /** How long a write waits for another process's write; said in the busy message. */
  readonly busyTimeoutMs?: number
}

/**
 * The store over an open database. With `recovery`, a database found damaged in the middle of
 * a session (pages of garbage after a sound header only fail when read) is moved aside, a
 * fresh one opened, the person told, and the operation run once more on the fresh one.
 */
export const makeSessionStore = (
  opened: DatabaseSync,
  file: string,
  dir: string,
  recovery?: SessionStoreRecovery
): SessionStoreShape & { readonly close: () => void } => {
  let db = opened
  let inode = inodeOf(file)
  const describe = (e: unknown) => describeSqliteError(file, e, recovery?.busyTimeoutMs)

  /** Runs `f` on the database; a damaged one is replaced once and `f` run again. */
  const run = <A>(f: (db: DatabaseSync) => A): Effect.Effect<A, SessionStoreError> =>
    Effect.suspend(() => {
      try {
        return Effect.succeed(f(db))
      } catch (e) {
        if (recovery === undefined || !isDamaged(e)) return Effect.fail(describe(e))
        try {
          db.close()
        } catch {
          // Closing a damaged database may fail too; the handle is dropped either way.
        }
        let aside: string | undefined
        try {
          aside = moveAside(file, inode)
          db = recovery.reopen()
          inode = inodeOf(file)
        } catch (again) {
          return Effect.fail(describe(again))
        }
        // Another process moved it first: the file there now is its fresh one; say nothing twice.
        const told = aside === undefined ? Effect.void : Effect.logWarning(movedAsideNotice(file, aside, e))
        return Effect.andThen(told, Effect.try({ try: () => f(db), catch: describe }))
      }
    })

  return {
    file,
    dir,
    close: () => {
      try {
        db.close()
      } catch {
        // Already closed: a reopen after a damaged file failed.
      }
    },
    read: (f) => run(f),
    write: (f) =>
      run((db) => {
        // IMMEDIATE takes the write lock up front, so a busy database fails here, before any work.
        db.exec("BEGIN IMMEDIATE")
        try {
          const result = f(db)
          db.exec("COMMIT")
          return result
        } catch (e) {
          try {
            if (db.isTransaction) db.exec("ROLLBACK")
          } catch {
            // A damaged database may refuse the rollback too; the first error is the one to report.
          }
          throw e
        }
      })
  }
}

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
        const busyTimeoutMs = options.busyTimeoutMs ?? 5_000
        const reopen = () => openDatabaseSync(file, { busyTimeoutMs })
        const describe = (e: unknown) =>
          e instanceof SessionStoreError ? e : describeSqliteError(file, e, busyTimeoutMs)
        // A file damaged from its header on fails at open: moved aside, and a fresh one opened.
        const opened = yield* Effect.suspend(() => {
          try {
            return Effect.succeed(reopen())
          } catch (e) {
            if (e instanceof SessionStoreError || !isDamaged(e)) return Effect.fail(describe(e))
            return Effect.try({ try: () => moveAside(file, undefined), catch: describe }).pipe(
              Effect.flatMap((aside) =>
                aside === undefined ? Effect.void : Effect.logWarning(movedAsideNotice(file, aside, e))
              ),
              Effect.andThen(Effect.try({ try: reopen, catch: describe }))
            )
          }
        })
        const store = makeSessionStore(opened, file, dir, { busyTimeoutMs, reopen })
        yield* Effect.addFinalizer(() => Effect.sync(() => store.close()))
        return SessionStore.of(store)
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
