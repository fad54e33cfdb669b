/**
 * `todowrite`: replaces the session's todo list. The list lives in the TodoStore (the session
 * database in a persistent tool system), so a restarted or resumed session still has its plan.
 */
import { Effect, Schema } from "effect"
import { TODO_PRIORITIES, TODO_STATUSES, type Todo, TodoStore } from "../session/todos.ts"
import { plural } from "../text/plural.ts"
import { fail } from "../tool/errors.ts"
import { defineTool } from "../tool/tool.ts"

const MAX_TODOS = 100

const TodoInput = Schema.Struct({
  id: Schema.optionalKey(
    Schema.String.annotate({ description: "Keep an item's id across rewrites; new items get one." })
  ),
  content: Schema.String.annotate({ description: "What to do, one short imperative line." }),
  status: Schema.Literals(TODO_STATUSES),
  priority: Schema.optionalKey(Schema.Literals(TODO_PRIORITIES))
})

const Parameters = Schema.Struct({
  todos: Schema.Array(TodoInput).annotate({ description: "The whole list, in order. It replaces the previous one." })
})

const MARK: Record<Todo["status"], string> = { pending: "[ ]", in_progress: "[>]", completed: "[x]", cancelled: "[-]" }

/** The list as the model reads it back: one line per item, with a count by status first. */
export const renderTodos = (todos: ReadonlyArray<Todo>): string => {
  if (todos.length === 0) return "The todo list is empty."
  const counts = TODO_STATUSES.map((s) => [s, todos.filter((t) => t.status === s).length] as const)
    .filter(([, n]) => n > 0)
    .map(([s, n]) => `${n} ${s.replace("_", " ")}`)
  const lines = todos.map(
    (t) => `${MARK[t.status]} ${t.id}. ${t.content}${t.priority === undefined ? "" : ` (${t.priority})`}`
  )
  return [`${plural(todos.length, "todo")}: ${counts.join(", ")}`, ...lines].join("\n")
}

export const TodoWriteTool = defineTool({
  id: "todowrite",
  description:
    "Replace your todo list for this session (a resumed session keeps it). Send the whole list each time; status is pending, in_progress, completed or cancelled, with at most one in_progress. Use it for work of 3+ steps; mark items completed as soon as they are done.",
  parameters: Parameters,
  permissions: { operations: ["session.write"] },
  interruptBehavior: "block",
  execute: ({ todos }, ctx) =>
    Effect.gen(function* () {
      if (todos.length > MAX_TODOS) {
        return yield* fail(
          `${todos.length} todos is too many (at most ${MAX_TODOS}); merge small steps into larger ones.`
        )
      }
      const empty = todos.flatMap((t, i) => (t.content.trim() === "" ? [i + 1] : []))
      if (empty.length > 0)
        return yield* fail(`Todo ${empty.join(", ")} has empty content; say what to do, or drop it.`)
      const given = todos.flatMap((t) => (t.id === undefined ? [] : [t.id]))
      const repeated = [...new Set(given.filter((id, i) => given.indexOf(id) !== i))]
      if (repeated.length > 0) {
        return yield* fail(
          `Todo id ${repeated.map((id) => JSON.stringify(id)).join(", ")} is used more than once; give each item its own id, or leave id out.`
        )
      }
      // New items get the smallest numbers not already taken.
      const taken = new Set(given)
      let next = 1
      const fresh = () => {
        while (taken.has(String(next))) next++
        taken.add(String(next))
        return String(next)
      }
      const list: Array<Todo> = todos.map((t) => ({
        id: t.id ?? fresh(),
        content: t.content.trim(),
        status: t.status,
        ...(t.priority === undefined ? {} : { priority: t.priority })
      }))
      const active = list.filter((t) => t.status === "in_progress")
      if (active.length > 1) {
        return yield* fail(
          `${active.length} todos are in_progress (${active.map((t) => JSON.stringify(t.content)).join(", ")}); keep exactly one in_progress and set the others to pending or completed.`
        )
      }
      const store = yield* TodoStore
      yield* store.set(ctx.sessionId, list)
      return { title: plural(list.length, "todo"), output: renderTodos(list), metadata: { todos: list } }
    })
})
