/**
 * A session's todo list (the plan the model keeps with `todowrite`), kept in the session
 * database so a restarted or resumed session still has it (spec gap 6). `get` is what a loop's
 * completion gate reads.
 */
import { Context, Effect, Layer } from "effect"
import { sessionsOrOwn } from "./sessions.ts"
import { SessionStore } from "./store.ts"

export const TODO_STATUSES = ["pending", "in_progress", "completed", "cancelled"] as const
export type TodoStatus = (typeof TODO_STATUSES)[number]
export const TODO_PRIORITIES = ["high", "medium", "low"] as const
export type TodoPriority = (typeof TODO_PRIORITIES)[number]

export interface Todo {
  readonly id: string
  readonly content: string
  readonly status: TodoStatus
  readonly priority?: TodoPriority
}

export class TodoStore extends Context.Service<
  TodoStore,
  {
    /** The session's list, in order; empty when it has none. */
    readonly get: (sessionId: string) => Effect.Effect<ReadonlyArray<Todo>>
    /** Replaces the session's list whole. */
    readonly set: (sessionId: string, todos: ReadonlyArray<Todo>) => Effect.Effect<void>
  }
>()("freecode/TodoStore") {
  /** For one process: tests and embedders that keep nothing. A list leaves with its session. */
  static readonly layerMemory = Layer.effect(
    TodoStore,
    Effect.map(sessionsOrOwn, (owner) => {
      const lists = owner.slot<{ todos: ReadonlyArray<Todo> }>("todos")
      return TodoStore.of({
        get: (sessionId) => Effect.sync(() => lists.get(sessionId)?.todos ?? []),
        set: (sessionId, todos) =>
          Effect.sync(() => {
            lists.getOrCreate(sessionId, () => ({ todos })).todos = todos
          })
      })
    })
  )

  /**
   * In the session database. A database that fails mid-session is a defect here: the
   * orchestrator turns it into an error result naming the file.
   */
  static readonly layerSqlite = Layer.effect(
    TodoStore,
    Effect.gen(function* () {
      const store = yield* SessionStore
      return TodoStore.of({
        get: (sessionId) =>
          store
            .read((db) => {
              const row = db.prepare("SELECT todos FROM todos WHERE session_id = ?").get(sessionId) as
                | { todos: string }
                | undefined
              return row === undefined ? [] : (JSON.parse(row.todos) as ReadonlyArray<Todo>)
            })
            .pipe(Effect.orDie),
        set: (sessionId, todos) =>
          store
            .write((db) => {
              db.prepare(
                "INSERT INTO todos (session_id, todos, updated_at) VALUES (?, ?, ?) ON CONFLICT (session_id) DO UPDATE SET todos = excluded.todos, updated_at = excluded.updated_at"
              ).run(sessionId, JSON.stringify(todos), Date.now())
            })
            .pipe(Effect.orDie)
      })
    })
  )
}
