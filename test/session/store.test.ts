import { spawn } from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { DatabaseSync } from "node:sqlite"
import { afterAll, describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Effect, Exit } from "effect"
import { projectStateDir, stateDirConfig } from "../../src/session/location.ts"
import { migrations } from "../../src/session/migrations.ts"
import { openDatabase, SessionStoreError } from "../../src/session/store.ts"
import { makeStateDir, openStore } from "./helpers.ts"

const state = makeStateDir()
afterAll(state.cleanup)
let n = 0
const project = () => NodePath.join(state.dir, `project-${++n}`)

describe("SessionStore", () => {
  it.effect("one database per project under the state folder, in WAL mode, synchronous=NORMAL, fully migrated", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const root = project()
        const store = yield* openStore({ root, stateDir: state.dir })
        expect(store.dir).toBe(projectStateDir(state.dir, root))
        expect(store.file).toBe(NodePath.join(store.dir, "sessions.db"))
        expect(NodePath.basename(store.dir)).toMatch(/^project-\d+-[0-9a-f]{12}$/)
        expect(NodeFs.existsSync(store.file)).toBe(true)
        const pragmas = yield* store.read((db) => ({
          journal: db.prepare("PRAGMA journal_mode").get(),
          sync: db.prepare("PRAGMA synchronous").get(),
          version: db.prepare("PRAGMA user_version").get()
        }))
        expect(pragmas).toEqual({
          journal: { journal_mode: "wal" },
          sync: { synchronous: 1 },
          version: { user_version: migrations.length }
        })
        // Another root is another database.
        const other = yield* openStore({ root: `${root}-other`, stateDir: state.dir })
        expect(other.file).not.toBe(store.file)
      })
    )
  )

  it.effect("the state folder: FREECODE_STATE_DIR, else $XDG_STATE_HOME/freecode-tools, else ~/.local/state", () =>
    Effect.gen(function* () {
      const read = (env: Record<string, string>) =>
        stateDirConfig.pipe(Effect.provideService(ConfigProvider.ConfigProvider, ConfigProvider.fromEnv({ env })))
      expect(yield* read({ FREECODE_STATE_DIR: "/tmp/a", XDG_STATE_HOME: "/x" })).toBe("/tmp/a")
      expect(yield* read({ XDG_STATE_HOME: "/x" })).toBe("/x/freecode-tools")
      // A relative XDG_STATE_HOME is invalid by the XDG spec and ignored.
      expect(yield* read({ XDG_STATE_HOME: "rel" })).toMatch(/\/\.local\/state\/freecode-tools$/)
      expect(yield* read({})).toMatch(/\/\.local\/state\/freecode-tools$/)
    })
  )

  it.effect("an older database is migrated in place and keeps its rows", () =>
    Effect.gen(function* () {
      const file = NodePath.join(state.dir, "old.db")
      const v1 = yield* openDatabase(file, { migrations: migrations.slice(0, 1) })
      v1.prepare("INSERT INTO output_sessions (id, used) VALUES ('s', 1)").run()
      expect(v1.prepare("PRAGMA user_version").get()).toEqual({ user_version: 1 })
      v1.close()
      const db = yield* openDatabase(file)
      expect(db.prepare("PRAGMA user_version").get()).toEqual({ user_version: migrations.length })
      expect(db.prepare("SELECT id FROM output_sessions").all()).toEqual([{ id: "s" }])
      expect(db.prepare("SELECT count(*) AS n FROM todos").get()).toEqual({ n: 0 })
      db.close()
    })
  )

  it.effect("a database from a newer version is refused, naming the file", () =>
    Effect.gen(function* () {
      const file = NodePath.join(state.dir, "newer.db")
      const db = new DatabaseSync(file)
      db.exec("PRAGMA user_version = 99")
      db.close()
      const error = yield* Effect.flip(openDatabase(file))
      expect(error).toBeInstanceOf(SessionStoreError)
      expect(error.message).toContain(file)
      expect(error.message).toContain("newer than this freecode-tools understands")
    })
  )

  it.effect("a file that is not a database is moved aside and a fresh one opened", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const root = project()
        const dir = projectStateDir(state.dir, root)
        NodeFs.mkdirSync(dir, { recursive: true })
        const text = "this is not a database, just text ".repeat(200)
        NodeFs.writeFileSync(NodePath.join(dir, "sessions.db"), text)
        const store = yield* openStore({ root, stateDir: state.dir })
        yield* store.write((db) => db.prepare("INSERT INTO output_sessions (id, used) VALUES ('x', 1)").run())
        const aside = NodeFs.readdirSync(dir).filter((f) => f.startsWith("sessions.db.damaged-"))
        expect(aside).toHaveLength(1)
        expect(NodeFs.readFileSync(NodePath.join(dir, aside[0]!), "utf8")).toBe(text)
      })
    )
  )

  it.effect("a write rolls back entirely when it throws midway", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const store = yield* openStore({ root: project(), stateDir: state.dir })
        const exit = yield* Effect.exit(
          store.write((db) => {
            db.prepare("INSERT INTO output_sessions (id, used) VALUES ('half', 1)").run()
            db.prepare("INSERT INTO no_such_table VALUES (1)").run()
          })
        )
        expect(Exit.isFailure(exit)).toBe(true)
        expect(yield* store.read((db) => db.prepare("SELECT count(*) AS n FROM output_sessions").get())).toEqual({
          n: 0
        })
        // The connection is usable after the rollback.
        yield* store.write((db) => db.prepare("INSERT INTO output_sessions (id, used) VALUES ('whole', 2)").run())
        expect(yield* store.read((db) => db.prepare("SELECT id FROM output_sessions").all())).toEqual([{ id: "whole" }])
      })
    )
  )

  it.effect("a database locked by another writer is a clear error naming the file, then works once released", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const store = yield* openStore({ root: project(), stateDir: state.dir, busyTimeoutMs: 50 })
        const other = new DatabaseSync(store.file)
        other.exec("BEGIN EXCLUSIVE")
        const error = yield* Effect.flip(
          store.write((db) => db.prepare("INSERT INTO output_sessions (id, used) VALUES ('x', 1)").run())
        )
        expect(error.message).toContain(store.file)
        expect(error.message).toContain("is busy: another process")
        other.exec("ROLLBACK")
        other.close()
        yield* store.write((db) => db.prepare("INSERT INTO output_sessions (id, used) VALUES ('x', 1)").run())
        expect(yield* store.read((db) => db.prepare("SELECT id FROM output_sessions").all())).toEqual([{ id: "x" }])
      })
    )
  )

  it.live(
    "a process killed in the middle of a write leaves no half-written record",
    () =>
      Effect.scoped(
        Effect.gen(function* () {
          const store = yield* openStore({ root: project(), stateDir: state.dir })
          // A real process opens the same database, inserts half of a record set inside a
          // transaction, says so, and waits to be killed before it commits.
          const script = `
            const { DatabaseSync } = require("node:sqlite")
            const db = new DatabaseSync(${JSON.stringify(store.file)})
            db.exec("BEGIN IMMEDIATE")
            for (let i = 0; i < 500; i++) db.prepare("INSERT INTO output_sessions (id, used) VALUES (?, ?)").run("k" + i, i)
            process.stdout.write("inserted\\n")
            setInterval(() => {}, 1000)
          `
          const child = spawn(process.execPath, ["-e", script], { stdio: ["ignore", "pipe", "inherit"] })
          yield* Effect.promise(
            () =>
              new Promise<void>((resolve) =>
                child.stdout.on("data", (b: Buffer) => b.includes("inserted") && resolve())
              )
          )
          const exited = new Promise((resolve) => child.on("exit", resolve))
          child.kill("SIGKILL")
          yield* Effect.promise(() => exited)
          expect(yield* store.read((db) => db.prepare("SELECT count(*) AS n FROM output_sessions").get())).toEqual({
            n: 0
          })
          yield* store.write((db) => db.prepare("INSERT INTO output_sessions (id, used) VALUES ('after', 1)").run())
          expect(yield* store.read((db) => db.prepare("SELECT id FROM output_sessions").all())).toEqual([
            { id: "after" }
          ])
        })
      ),
    60_000
  )
})
