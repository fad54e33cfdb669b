/**
 * A session database that is damaged or busy is not a bug in the tool: a damaged one is moved
 * aside and a fresh one started (the person is told which file and where it went), a busy one
 * is waited for with a bound and then named with who holds it — and calls go on either way.
 */
import { type ChildProcess, spawn } from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { afterAll, describe, expect, it } from "@effect/vitest"
import { Context, Effect, Layer, Logger } from "effect"
import { testToolSystem } from "../../layers/test.ts"
import { Dispatcher } from "../../src/dispatch/dispatcher.ts"
import { Approval, type ApprovalQuestion } from "../../src/permission/approval.ts"
import { projectStateDir } from "../../src/session/location.ts"
import { makeStateDir, openStore } from "./helpers.ts"

const state = makeStateDir()
afterAll(state.cleanup)
let n = 0
const project = () => {
  const root = NodePath.join(state.dir, `work-${++n}`)
  NodeFs.mkdirSync(root, { recursive: true })
  return root
}

/** Seeded bytes (xorshift), so a failure is the same failure on every run. */
const garbage = (length: number, seed: number): Buffer => {
  const out = Buffer.alloc(length)
  let x = seed
  for (let i = 0; i < length; i++) {
    x ^= x << 13
    x ^= x >>> 17
    x ^= x << 5
    out[i] = x & 0xff
  }
  return out
}

/** A real database with rows in it, then garbage written over everything after byte `from`. */
const damagedDatabase = (root: string, from: number) =>
  Effect.gen(function* () {
    const file = yield* Effect.scoped(
      Effect.gen(function* () {
        const store = yield* openStore({ root, stateDir: state.dir })
        yield* store.write((db) => {
          const insert = db.prepare("INSERT INTO todos (session_id, todos, updated_at) VALUES (?, ?, ?)")
          for (let i = 0; i < 200; i++) insert.run(`s${i}`, JSON.stringify([{ content: "x".repeat(200) }]), i)
        })
        return store.file
      })
    )
    const size = NodeFs.statSync(file).size
    expect(size).toBeGreaterThan(from + 4096)
    const fd = NodeFs.openSync(file, "r+")
    NodeFs.writeSync(fd, garbage(size - from, 0x9e3779b9), 0, size - from, from)
    NodeFs.closeSync(fd)
    return file
  })

/** Collects what the system logs (the person's stderr in the CLI). */
const collectLogs = () => {
  const lines: Array<string> = []
  const layer = Logger.layer([Logger.make(({ message }) => void lines.push(String(message)))])
  return { lines, layer }
}

const systemCall = (
  root: string,
  call: { readonly name: string; readonly args: Record<string, unknown> },
  options: { readonly busyTimeoutMs?: number; readonly asked?: Array<ApprovalQuestion> } = {}
) =>
  Effect.scoped(
    Effect.gen(function* () {
      const context = yield* Layer.build(
        testToolSystem({
          root,
          config: {},
          sessions: {
            stateDir: state.dir,
            ...(options.busyTimeoutMs === undefined ? {} : { busyTimeoutMs: options.busyTimeoutMs })
          },
          approval: Approval.layerTest({ answer: "always" }, options.asked ?? [])
        })
      )
      return yield* Context.get(context, Dispatcher).dispatch({ id: `c-${++n}`, ...call }, { sessionId: "s1" })
    })
  )

describe("a damaged session database", () => {
  for (const [what, from] of [
    ["garbage pages after its header", 4096],
    ["garbage right after the 100-byte header", 100]
  ] as const) {
    it.live(`${what}: moved aside, a fresh one started, the person told, the call runs`, () =>
      Effect.gen(function* () {
        const root = project()
        const file = yield* damagedDatabase(root, from)
        const logs = collectLogs()
        // bash asks (expr is not read-only), so the call reads saved approvals from the database.
        const asked: Array<ApprovalQuestion> = []
        const result = yield* systemCall(root, { name: "bash", args: { command: "expr 40 + 2" } }, { asked }).pipe(
          Effect.provide(logs.layer)
        )
        expect(result.modelOutput).not.toMatch(/bug/)
        expect(result.status).toBe("ok")
        expect(result.modelOutput).toContain("42")
        const dir = projectStateDir(state.dir, root)
        const aside = NodeFs.readdirSync(dir).filter((f) => /^sessions\.db\.damaged-[\dT-]+Z$/.test(f))
        expect(aside).toHaveLength(1)
        // The old bytes are kept for the person; the new file is a working database.
        expect(NodeFs.statSync(NodePath.join(dir, aside[0]!)).size).toBeGreaterThan(from)
        const told = logs.lines.join("\n")
        expect(told).toContain(file)
        expect(told).toContain(NodePath.join(dir, aside[0]!))
        expect(told).toMatch(/damaged/)
        // The "always" answer went into the fresh database: a later system is not asked again.
        const again: Array<ApprovalQuestion> = []
        const later = yield* systemCall(root, { name: "bash", args: { command: "expr 40 + 2" } }, { asked: again })
        expect(later.status).toBe("ok")
        expect(again).toEqual([])
      })
    )
  }

  it.live("todowrite on a database damaged mid-session recovers and saves the list", () =>
    Effect.gen(function* () {
      const root = project()
      yield* damagedDatabase(root, 4096)
      const result = yield* systemCall(root, {
        name: "todowrite",
        args: { todos: [{ content: "ship it", status: "pending" }] }
      })
      expect(result.status).toBe("ok")
      expect(result.modelOutput).toContain("ship it")
    })
  )
})

/** A second real process that takes the database's write lock (BEGIN EXCLUSIVE) and keeps it. */
const holdLock = (file: string) =>
  Effect.acquireRelease(
    Effect.callback<ChildProcess>((resume) => {
      const script = `
        const { DatabaseSync } = require("node:sqlite")
        const db = new DatabaseSync(${JSON.stringify(file)})
        db.exec("BEGIN EXCLUSIVE")
        db.prepare("INSERT INTO todos (session_id, todos, updated_at) VALUES ('holder', '[]', 0)").run()
        process.stdout.write("locked\\n")
        setTimeout(() => {}, 60_000)
      `
      const child = spawn(process.execPath, ["-e", script], { stdio: ["ignore", "pipe", "inherit"] })
      child.stdout!.on("data", (b: Buffer) => b.includes("locked") && resume(Effect.succeed(child)))
    }),
    (child) => Effect.sync(() => child.kill("SIGKILL"))
  )

describe("a busy session database", () => {
  it.live("a write waits its bound, then names the file and the process holding it", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const store = yield* openStore({ root: project(), stateDir: state.dir, busyTimeoutMs: 300 })
        const child = yield* holdLock(store.file)
        const error = yield* Effect.flip(
          store.write((db) =>
            db.prepare("INSERT INTO todos (session_id, todos, updated_at) VALUES ('me', '[]', 1)").run()
          )
        )
        expect(error.message).toContain(store.file)
        expect(error.message).toContain("busy")
        expect(error.message).toContain(`pid ${child.pid}`)
        // Reads do not wait for a writer (WAL).
        expect(yield* store.read((db) => db.prepare("SELECT count(*) AS n FROM todos").get())).toEqual({ n: 0 })
      })
    )
  )

  it.live("calls go on while another process holds the lock; the one that needs it says why, not 'a bug'", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const root = project()
        const file = yield* Effect.scoped(Effect.map(openStore({ root, stateDir: state.dir }), (s) => s.file))
        const child = yield* holdLock(file)
        const logs = collectLogs()
        // bash records its output in the database: the put misses, the call does not.
        const bash = yield* systemCall(
          root,
          { name: "bash", args: { command: "expr 40 + 2" } },
          { busyTimeoutMs: 300 }
        ).pipe(Effect.provide(logs.layer))
        expect(bash.status).toBe("ok")
        expect(bash.modelOutput).toContain("42")
        expect(logs.lines.join("\n")).toContain(`pid ${child.pid}`)
        const todo = yield* systemCall(
          root,
          { name: "todowrite", args: { todos: [{ content: "ship it", status: "pending" }] } },
          { busyTimeoutMs: 300 }
        )
        expect(todo.status).toBe("error")
        expect(todo.modelOutput).not.toMatch(/bug/)
        expect(todo.modelOutput).toContain(file)
        expect(todo.modelOutput).toContain(`pid ${child.pid}`)
      })
    )
  )
})
