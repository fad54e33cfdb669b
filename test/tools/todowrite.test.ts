import { spawn } from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { NodeServices } from "@effect/platform-node"
import { afterAll, describe, expect, it } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import { toolSystem } from "../../layers/system.ts"
import { testToolSystem } from "../../layers/test.ts"
import { Dispatcher } from "../../src/dispatch/dispatcher.ts"
import { OutputConfig } from "../../src/output/config.ts"
import { projectStateDir } from "../../src/session/location.ts"
import { SessionStore } from "../../src/session/store.ts"
import { TodoStore } from "../../src/session/todos.ts"
import { makeStateDir } from "../session/helpers.ts"

const state = makeStateDir()
const root = NodeFs.realpathSync(NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "freecode-todo-")))
afterAll(() => {
  state.cleanup()
  NodeFs.rmSync(root, { recursive: true, force: true })
})

/** A persistent tool system on the temp state folder; each build is a fresh process's view. */
const system = () =>
  toolSystem({ root, config: {}, outputConfig: OutputConfig.layerWith({}), sessions: { stateDir: state.dir } }).pipe(
    Layer.provideMerge(NodeServices.layer)
  )

const withSystem = <A, E>(f: (context: Context.Context<Dispatcher | TodoStore>) => Effect.Effect<A, E>) =>
  Effect.scoped(Effect.flatMap(Layer.build(system()), f))

const todowrite = (dispatcher: Dispatcher["Service"], sessionId: string, todos: unknown) =>
  dispatcher.dispatch({ id: `c-${Math.random()}`, name: "todowrite", args: { todos } }, { sessionId })

describe("todowrite", () => {
  it.live("replaces the list, gives new items ids, and returns it compactly", () =>
    withSystem((context) =>
      Effect.gen(function* () {
        const dispatcher = Context.get(context, Dispatcher)
        const result = yield* todowrite(dispatcher, "plan-1", [
          { content: "Read the parser", status: "completed" },
          { id: "7", content: "Fix the off-by-one", status: "in_progress", priority: "high" },
          { content: "  Add a test  ", status: "pending" },
          { content: "Rewrite in Rust", status: "cancelled" }
        ])
        expect(result.status).toBe("ok")
        expect(result.modelOutput).toBe(
          [
            "4 todos: 1 pending, 1 in progress, 1 completed, 1 cancelled",
            "[x] 1. Read the parser",
            "[>] 7. Fix the off-by-one (high)",
            "[ ] 2. Add a test",
            "[-] 3. Rewrite in Rust"
          ].join("\n")
        )
        const list = yield* Context.get(context, TodoStore).get("plan-1")
        expect(list.map((t) => t.id)).toEqual(["1", "7", "2", "3"])
        // Replaced whole, not merged.
        yield* todowrite(dispatcher, "plan-1", [{ id: "7", content: "Fix the off-by-one", status: "completed" }])
        expect(yield* Context.get(context, TodoStore).get("plan-1")).toEqual([
          { id: "7", content: "Fix the off-by-one", status: "completed" }
        ])
        expect(yield* Context.get(context, TodoStore).get("another-session")).toEqual([])
      })
    )
  )

  it.live("refuses two in_progress items, repeated ids and empty content, with what to do; the list is kept", () =>
    withSystem((context) =>
      Effect.gen(function* () {
        const dispatcher = Context.get(context, Dispatcher)
        yield* todowrite(dispatcher, "strict", [{ content: "keep me", status: "pending" }])
        const two = yield* todowrite(dispatcher, "strict", [
          { content: "a", status: "in_progress" },
          { content: "b", status: "in_progress" }
        ])
        expect(two.status).toBe("error")
        expect(two.modelOutput).toContain('2 todos are in_progress ("a", "b"); keep exactly one in_progress')
        const ids = yield* todowrite(dispatcher, "strict", [
          { id: "x", content: "a", status: "pending" },
          { id: "x", content: "b", status: "pending" }
        ])
        expect(ids.modelOutput).toContain('Todo id "x" is used more than once')
        const empty = yield* todowrite(dispatcher, "strict", [{ content: " ", status: "pending" }])
        expect(empty.modelOutput).toContain("Todo 1 has empty content")
        const badStatus = yield* todowrite(dispatcher, "strict", [{ content: "a", status: "done" }])
        expect(badStatus.status).toBe("error")
        expect(badStatus.modelOutput).toContain("status")
        expect(yield* Context.get(context, TodoStore).get("strict")).toEqual([
          { id: "1", content: "keep me", status: "pending" }
        ])
      })
    )
  )

  it.live("the list survives a restart: a new tool system on the same state folder has it", () =>
    Effect.gen(function* () {
      yield* withSystem((context) =>
        todowrite(Context.get(context, Dispatcher), "restart", [{ content: "survive", status: "in_progress" }])
      )
      const after = yield* withSystem((context) => Context.get(context, TodoStore).get("restart"))
      expect(after).toEqual([{ id: "1", content: "survive", status: "in_progress" }])
    })
  )

  it.live("plan mode may still keep a plan: todowrite runs under the plan profile", () =>
    withSystem((context) =>
      Effect.gen(function* () {
        const plan = yield* Context.get(context, Dispatcher).withProfile("plan")
        const result = yield* todowrite(plan, "planner", [{ content: "Look around", status: "in_progress" }])
        expect(result.status).toBe("ok")
      })
    )
  )

  it.live(
    "a CLI process with --session writes the list; TodoStore.get reads it from the database",
    () =>
      Effect.gen(function* () {
        const code = yield* Effect.promise(
          () =>
            new Promise<number | null>((resolve, reject) => {
              const child = spawn(
                process.execPath,
                [
                  NodePath.resolve(import.meta.dirname, "../../src/cli/main.ts"),
                  "call",
                  "todowrite",
                  JSON.stringify({ todos: [{ content: "from the CLI", status: "pending", priority: "low" }] }),
                  "--root",
                  root,
                  "--session",
                  "cli-session"
                ],
                { env: { ...process.env, FREECODE_STATE_DIR: state.dir }, stdio: "ignore" }
              )
              child.on("error", reject)
              child.on("close", resolve)
            })
        )
        expect(code).toBe(0)
        const todos = yield* Effect.scoped(
          Effect.gen(function* () {
            const context = yield* Layer.build(
              TodoStore.layerSqlite.pipe(Layer.provide(SessionStore.layer({ root, stateDir: state.dir })))
            )
            return yield* Context.get(context, TodoStore).get("cli-session")
          })
        )
        expect(todos).toEqual([{ id: "1", content: "from the CLI", status: "pending", priority: "low" }])
      }),
    120_000
  )
})

describe("todowrite on a locked database", () => {
  it.live("is an error result naming the database file, and the process goes on", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const context = yield* Layer.build(
          testToolSystem({ root, config: {}, sessions: { stateDir: state.dir, busyTimeoutMs: 20 } })
        )
        const file = NodePath.join(projectStateDir(state.dir, root), "sessions.db")
        const { DatabaseSync } = yield* Effect.promise(() => import("node:sqlite"))
        const other = new DatabaseSync(file)
        other.exec("BEGIN EXCLUSIVE")
        const dispatcher = Context.get(context, Dispatcher)
        const locked = yield* todowrite(dispatcher, "locked", [{ content: "wait", status: "pending" }])
        other.exec("ROLLBACK")
        other.close()
        expect(locked.status).toBe("error")
        expect(locked.modelOutput).toContain(file)
        expect(locked.modelOutput).toContain("is busy: another process")
        expect(locked.modelOutput).not.toMatch(/bug/)
        const after = yield* todowrite(dispatcher, "locked", [{ content: "wait", status: "pending" }])
        expect(after.status).toBe("ok")
      })
    )
  )
})
