import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { NodeServices } from "@effect/platform-node"
import { afterAll, describe, expect, it } from "@effect/vitest"
import { Context, Effect, FileSystem, Layer, Option, type Scope } from "effect"
import { OutputConfig, type OutputSettings } from "../../src/output/config.ts"
import { OutputStore } from "../../src/output/store.ts"
import { layerSqliteOutputStore, makeSqliteStore, sweepOrphans } from "../../src/output/store-sqlite.ts"
import { projectStateDir } from "../../src/session/location.ts"
import { SessionStore } from "../../src/session/store.ts"
import { makeStateDir, openStore } from "./helpers.ts"

const state = makeStateDir()
afterAll(state.cleanup)
let n = 0
const project = () => NodePath.join(state.dir, `project-${++n}`)

const limits = { bytesPerSession: 1_000_000, sessions: 50, spillBytes: 10_000_000, keepChars: 100 }

/** A persistent store on a project's database; a second call on the same root is a second process's view. */
const storeAt = (
  root: string,
  overrides: Partial<typeof limits> = {}
): Effect.Effect<OutputStore["Service"], unknown, Scope.Scope | FileSystem.FileSystem> =>
  Effect.gen(function* () {
    const sessions = yield* openStore({ root, stateDir: state.dir })
    const fs = yield* FileSystem.FileSystem
    const spillDir = NodePath.join(sessions.dir, "outputs", `t${++n}`)
    NodeFs.mkdirSync(spillDir, { recursive: true })
    return makeSqliteStore(sessions, fs, spillDir, { ...limits, ...overrides })
  })

const run = <A>(effect: Effect.Effect<A, unknown, Scope.Scope | FileSystem.FileSystem>) =>
  effect.pipe(Effect.scoped, Effect.provide(NodeServices.layer))

describe("OutputStore (session database)", () => {
  it.effect("an output put by one store is read back by another on the same database", () =>
    run(
      Effect.gen(function* () {
        const root = project()
        const first = yield* storeAt(root)
        expect(yield* first.put({ sessionId: "s", id: "c1", tool: "bash", text: "a\nb\nc\n" })).toEqual({
          stored: true
        })
        const second = yield* storeAt(root)
        expect(Option.getOrThrow(yield* second.get("s", "c1"))).toMatchObject({
          sessionId: "s",
          id: "c1",
          tool: "bash",
          text: "a\nb\nc\n",
          lines: 3,
          chars: 6,
          bytes: 6
        })
        expect(Option.isNone(yield* second.get("other", "c1"))).toBe(true)
        expect(Option.isNone(yield* second.get("s", "missing"))).toBe(true)
      })
    )
  )

  it.effect("evicts the least recently used outputs of a session past its byte budget (bytes, not chars)", () =>
    run(
      Effect.gen(function* () {
        const store = yield* storeAt(project(), { bytesPerSession: 30 })
        yield* store.put({ sessionId: "s", id: "a", tool: "t", text: "x".repeat(10) })
        yield* store.put({ sessionId: "s", id: "b", tool: "t", text: "x".repeat(10) })
        yield* store.get("s", "a") // a is now the most recently used
        yield* store.put({ sessionId: "s", id: "c", tool: "t", text: "x".repeat(10) })
        expect(yield* store.ids("s")).toEqual(["b", "a", "c"])
        // "€€€€" is 4 characters but 12 bytes: 42 bytes push out b, then a (counting characters, only b).
        yield* store.put({ sessionId: "s", id: "d", tool: "t", text: "€€€€" })
        expect(yield* store.ids("s")).toEqual(["c", "d"])
      })
    )
  )

  it.effect("drops the least recently used session past the session limit", () =>
    run(
      Effect.gen(function* () {
        const store = yield* storeAt(project(), { sessions: 2 })
        yield* store.put({ sessionId: "s1", id: "a", tool: "t", text: "1" })
        yield* store.put({ sessionId: "s2", id: "a", tool: "t", text: "2" })
        yield* store.get("s1", "a")
        yield* store.put({ sessionId: "s3", id: "a", tool: "t", text: "3" })
        expect(Option.isSome(yield* store.get("s1", "a"))).toBe(true)
        expect(Option.isNone(yield* store.get("s2", "a"))).toBe(true)
        expect(Option.isSome(yield* store.get("s3", "a"))).toBe(true)
      })
    )
  )

  it.effect("an output past a session's budget spills to a file the store owns, readable from another store", () =>
    run(
      Effect.gen(function* () {
        const root = project()
        const store = yield* storeAt(root, { bytesPerSession: 100 })
        const text = Array.from({ length: 50 }, (_, i) => `line ${i + 1}`).join("\n")
        expect(yield* store.put({ sessionId: "s", id: "big", tool: "bash", text })).toEqual({ stored: true })
        const other = yield* storeAt(root, { bytesPerSession: 100 })
        const entry = Option.getOrThrow(yield* other.get("s", "big"))
        expect(entry.text).toBe("")
        expect(entry.file).toBeDefined()
        expect(entry.file!.startsWith(NodePath.join(state.dir, "projects"))).toBe(true)
        expect(NodeFs.readFileSync(entry.file!, "utf8")).toBe(text)
        expect(entry).toMatchObject({ lines: 50, chars: text.length, head: text.slice(0, 100) })
        // A spilled file someone removed is a miss, not a pointer at nothing.
        NodeFs.rmSync(entry.file!)
        expect(Option.isNone(yield* other.get("s", "big"))).toBe(true)
      })
    )
  )

  it.effect("spilled files have a disk budget: the oldest file is evicted and removed", () =>
    run(
      Effect.gen(function* () {
        const store = yield* storeAt(project(), { bytesPerSession: 10, spillBytes: 250 })
        yield* store.put({ sessionId: "s1", id: "one", tool: "t", text: "1".repeat(100) })
        const first = Option.getOrThrow(yield* store.get("s1", "one")).file!
        yield* store.put({ sessionId: "s2", id: "two", tool: "t", text: "2".repeat(100) })
        expect(NodeFs.existsSync(first)).toBe(true)
        yield* store.put({ sessionId: "s2", id: "three", tool: "t", text: "3".repeat(100) })
        expect(Option.isNone(yield* store.get("s1", "one"))).toBe(true)
        expect(NodeFs.existsSync(first)).toBe(false)
        expect(Option.isSome(yield* store.get("s2", "two"))).toBe(true)
        expect(Option.isSome(yield* store.get("s2", "three"))).toBe(true)
      })
    )
  )

  it.effect("replacing an entry removes the file of the one it replaced", () =>
    run(
      Effect.gen(function* () {
        const store = yield* storeAt(project(), { bytesPerSession: 10 })
        yield* store.put({ sessionId: "s", id: "a", tool: "t", text: "x".repeat(50) })
        const file = Option.getOrThrow(yield* store.get("s", "a")).file!
        yield* store.put({ sessionId: "s", id: "a", tool: "t", text: "small" })
        expect(NodeFs.existsSync(file)).toBe(false)
        expect(Option.getOrThrow(yield* store.get("s", "a")).text).toBe("small")
      })
    )
  )

  it.effect("a streamed output (open/write/commit) is kept, and one in memory stays in the database", () =>
    run(
      Effect.gen(function* () {
        const root = project()
        const store = yield* storeAt(root)
        const writer = yield* store.open({ sessionId: "s", id: "w", tool: "bash" })
        yield* writer.write("hello ")
        yield* writer.write("world\n")
        expect((yield* writer.commit).result).toEqual({ stored: true })
        expect(Option.getOrThrow(yield* (yield* storeAt(root)).get("s", "w")).text).toBe("hello world\n")
      })
    )
  )

  it.effect("its byte counters always equal the rows they count, through replacements and evictions", () =>
    run(
      Effect.gen(function* () {
        const root = project()
        const sessions = yield* openStore({ root, stateDir: state.dir })
        const fs = yield* FileSystem.FileSystem
        const spillDir = NodePath.join(sessions.dir, "outputs", "counters")
        NodeFs.mkdirSync(spillDir, { recursive: true })
        const store = makeSqliteStore(sessions, fs, spillDir, {
          ...limits,
          bytesPerSession: 300,
          sessions: 3,
          spillBytes: 2_000
        })
        // A fixed pseudo-random walk: sizes across the spill line, ids that repeat, five sessions.
        let seed = 7
        const next = (n: number) => {
          seed = (seed * 1103515245 + 12345) % 2 ** 31
          return seed % n
        }
        for (let i = 0; i < 300; i++) {
          const sessionId = `s${next(5)}`
          yield* store.put({ sessionId, id: `c${next(12)}`, tool: "t", text: "z".repeat(1 + next(600)) })
          if (i % 7 === 0) yield* store.get(sessionId, `c${next(12)}`)
        }
        const check = yield* sessions.read((db) => ({
          held: db
            .prepare(
              "SELECT s.id, s.bytes AS counted, coalesce(sum(o.bytes), 0) AS actual FROM output_sessions s LEFT JOIN outputs o ON o.session_id = s.id AND o.file IS NULL GROUP BY s.id"
            )
            .all() as Array<{ counted: number; actual: number }>,
          disk: db.prepare("SELECT value FROM meta WHERE key = 'disk_bytes'").get() as { value: number },
          files: db.prepare("SELECT coalesce(sum(bytes), 0) AS total FROM outputs WHERE file IS NOT NULL").get() as {
            total: number
          },
          sessions: (db.prepare("SELECT count(*) AS n FROM output_sessions").get() as { n: number }).n
        }))
        for (const s of check.held) {
          expect(s.counted).toBe(s.actual)
          expect(s.counted).toBeLessThanOrEqual(300)
        }
        expect(check.disk.value).toBe(check.files.total)
        expect(check.sessions).toBeLessThanOrEqual(3)
        // Every file a row names exists, and no file is left that no row names.
        const named = (yield* sessions.read(
          (db) => db.prepare("SELECT file FROM outputs WHERE file IS NOT NULL").all() as Array<{ file: string }>
        )).map((r) => r.file)
        expect(
          NodeFs.readdirSync(spillDir)
            .map((f) => NodePath.join(spillDir, f))
            .sort()
        ).toEqual([...named].sort())
      })
    )
  )

  it.effect("opening sweeps spill files left by killed processes, once old, never a named or young one", () =>
    run(
      Effect.gen(function* () {
        const root = project()
        const store = yield* storeAt(root, { bytesPerSession: 10 })
        yield* store.put({ sessionId: "s", id: "kept", tool: "t", text: "k".repeat(50) })
        const kept = Option.getOrThrow(yield* store.get("s", "kept")).file!
        const sessions = yield* openStore({ root, stateDir: state.dir })
        const outputs = NodePath.join(sessions.dir, "outputs")
        const dead = NodePath.join(outputs, "killed-process")
        NodeFs.mkdirSync(dead, { recursive: true })
        const orphan = NodePath.join(dead, "1-call.out")
        const young = NodePath.join(dead, "2-call.out")
        NodeFs.writeFileSync(orphan, "half an output")
        NodeFs.writeFileSync(young, "still being written")
        const emptyOld = NodePath.join(outputs, "empty-old")
        NodeFs.mkdirSync(emptyOld)
        const twoDaysAgo = new Date(Date.now() - 2 * 24 * 3600 * 1000)
        for (const p of [orphan, kept, emptyOld]) NodeFs.utimesSync(p, twoDaysAgo, twoDaysAgo)
        expect(yield* sweepOrphans(sessions)).toBe(1)
        expect(NodeFs.existsSync(orphan)).toBe(false)
        expect(NodeFs.existsSync(young)).toBe(true)
        expect(NodeFs.existsSync(kept)).toBe(true)
        expect(NodeFs.existsSync(emptyOld)).toBe(false)
      })
    )
  )

  it.effect("a locked database makes a put not stored, saying why (never a crash)", () =>
    run(
      Effect.gen(function* () {
        const root = project()
        const sessions = yield* openStore({ root, stateDir: state.dir, busyTimeoutMs: 20 })
        const fs = yield* FileSystem.FileSystem
        const store = makeSqliteStore(sessions, fs, state.dir, limits)
        const { DatabaseSync } = yield* Effect.promise(() => import("node:sqlite"))
        const other = new DatabaseSync(sessions.file)
        other.exec("BEGIN EXCLUSIVE")
        const result = yield* store.put({ sessionId: "s", id: "a", tool: "t", text: "x" })
        other.exec("ROLLBACK")
        other.close()
        expect(result).toEqual({ stored: false, reason: expect.stringContaining(sessions.file) })
        expect(yield* store.put({ sessionId: "s", id: "a", tool: "t", text: "x" })).toEqual({ stored: true })
      })
    )
  )

  it.effect("the layer reads OutputConfig and keeps its spill folder under the project's state folder", () =>
    Effect.gen(function* () {
      const root = project()
      const settings: Partial<OutputSettings> = { storeBytes: 10 }
      const layer = layerSqliteOutputStore.pipe(
        Layer.provideMerge(SessionStore.layer({ root, stateDir: state.dir })),
        Layer.provide(OutputConfig.layerWith(settings)),
        Layer.provide(NodeServices.layer)
      )
      const file = yield* Effect.scoped(
        Effect.gen(function* () {
          const context = yield* Layer.build(layer)
          const store = Context.get(context, OutputStore)
          yield* store.put({ sessionId: "s", id: "a", tool: "t", text: "y".repeat(40) })
          return Option.getOrThrow(yield* store.get("s", "a")).file!
        })
      )
      // The file outlives the process's layer: a resumed session reads it.
      expect(NodeFs.existsSync(file)).toBe(true)
      expect(file.startsWith(NodePath.join(projectStateDir(state.dir, root), "outputs"))).toBe(true)
    })
  )
})
