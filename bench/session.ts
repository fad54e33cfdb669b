/**
 * The session database's cost per call: the persistent OutputStore (node:sqlite, WAL,
 * synchronous=NORMAL, one transaction per put) against the in-memory store, and todowrite's
 * TodoStore.set. Run: node bench/session.ts
 */
import { mkdirSync, mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { NodeServices } from "@effect/platform-node"
import { Context, Effect, FileSystem, Layer } from "effect"
import { makeMemoryStore } from "../src/output/store.ts"
import { makeSqliteStore } from "../src/output/store-sqlite.ts"
import { makeSessions } from "../src/session/sessions.ts"
import { SessionStore } from "../src/session/store.ts"
import { TodoStore } from "../src/session/todos.ts"
import { header, paired, row, time } from "./lib.ts"

const state = mkdtempSync(join(tmpdir(), "freecode-bench-state-"))
const run = <A>(effect: Effect.Effect<A>) => Effect.runPromise(effect)

const main = Effect.gen(function* () {
  const context = yield* Layer.build(
    Layer.merge(TodoStore.layerSqlite, Layer.empty).pipe(
      Layer.provideMerge(SessionStore.layer({ root: join(state, "project"), stateDir: state }))
    )
  )
  const sessions = Context.get(context, SessionStore)
  const todos = Context.get(context, TodoStore)
  const fs = yield* FileSystem.FileSystem
  const spillDir = join(sessions.dir, "outputs", "bench")
  mkdirSync(spillDir, { recursive: true })
  const limits = { bytesPerSession: 64 * 1024 * 1024, sessions: 50, spillBytes: 1024 ** 3, keepChars: 500_000 }
  const sqlite = makeSqliteStore(sessions, fs, spillDir, limits)
  const memory = makeMemoryStore(limits.bytesPerSession, makeSessions({ maxSessions: limits.sessions }))
  const text = "x".repeat(79).concat("\n").repeat(128) // 10 KiB, 128 lines
  let n = 0

  const [memPut, sqlPut] = yield* Effect.promise(() =>
    paired(
      2000,
      ["put 10 KiB, memory store", () => run(memory.put({ sessionId: "s", id: `m${n++}`, tool: "bash", text }))],
      ["put 10 KiB, session database", () => run(sqlite.put({ sessionId: "s", id: `q${n++}`, tool: "bash", text }))]
    )
  )
  const [memGet, sqlGet] = yield* Effect.promise(() =>
    paired(
      2000,
      ["get (output tool), memory store", () => run(memory.get("s", "m10"))],
      ["get (output tool), session database", () => run(sqlite.get("s", "q11"))]
    )
  )
  const list = Array.from({ length: 10 }, (_, i) => ({
    id: String(i + 1),
    content: `step ${i + 1}`,
    status: "pending" as const
  }))
  const todoSet = yield* Effect.promise(() =>
    time("todowrite: TodoStore.set, 10 items", 2000, () => run(todos.set("s", list)))
  )
  console.log(header)
  for (const [t, base] of [
    [memPut, undefined],
    [sqlPut, memPut],
    [memGet, undefined],
    [sqlGet, memGet],
    [todoSet, undefined]
  ] as const) {
    console.log(row(t, base))
  }
})

await Effect.runPromise(Effect.scoped(main).pipe(Effect.provide(NodeServices.layer)))
rmSync(state, { recursive: true, force: true })
