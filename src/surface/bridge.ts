/**
 * tool_search and tool_call: ordinary tools that a deferring surface adds to its catalog, so
 * their calls take the same path as any other (decode, rules, hooks, store, budget, events).
 * tool_search reads the surface's view; tool_call forwards: the path prepares the call it names.
 */
import { Effect, Result, Schema } from "effect"
import { closestNames } from "../registry/suggest.ts"
import { plural } from "../text/plural.ts"
import { fail, InvalidArguments } from "../tool/errors.ts"
import { defineTool, type Tool, type ToolOutput } from "../tool/tool.ts"
import { rankTools, selectNames } from "./search.ts"

export const SEARCH_TOOL = "tool_search"
export const CALL_TOOL = "tool_call"
const SEARCH_LIMIT = 5

const SearchParams = Schema.Struct({
  query: Schema.String.annotate({
    description: 'What you want to do, e.g. "create github issue"; or "select:name1,name2".'
  }),
  limit: Schema.optionalKey(
    Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 20 })).annotate({
      description: `Most results (default ${SEARCH_LIMIT}).`
    })
  )
})

const CallParams = Schema.Struct({
  name: Schema.String.annotate({ description: "Its name." }),
  arguments: Schema.optionalKey(
    Schema.Record(Schema.String, Schema.Unknown).annotate({ description: "Its arguments, per its schema." })
  )
})

/** What tool_search needs of its surface. */
export interface SearchScope {
  readonly strategy: "bridge" | "expand"
  /** The tools a search may find (deferred and visible). */
  readonly pool: Effect.Effect<ReadonlyArray<Tool>>
  /** The tools declared to this session now. */
  readonly declared: (sessionId: string) => Effect.Effect<ReadonlyArray<Tool>>
  /** Records what a session found (expand declares it; bridge lets it be called by name). */
  readonly discover: (sessionId: string, ids: ReadonlyArray<string>) => void
}

const pick = (names: ReadonlyArray<string>, pool: ReadonlyArray<Tool>, declared: ReadonlyArray<Tool>) => {
  const byName = new Map(pool.map((t) => [t.id.toLowerCase(), t]))
  const declaredNow = new Set(declared.map((t) => t.id.toLowerCase()))
  const picked: Array<Tool> = []
  const notes: Array<string> = []
  for (const name of names) {
    const tool = byName.get(name.toLowerCase())
    if (tool !== undefined) {
      if (!picked.includes(tool)) picked.push(tool)
    } else if (declaredNow.has(name.toLowerCase())) {
      notes.push(`${name} is already declared: call it directly.`)
    } else {
      const close = closestNames(
        name,
        pool.map((t) => t.id)
      )
      notes.push(
        `No tool named "${name}".${close.length > 0 ? ` Did you mean ${close.map((c) => `"${c}"`).join(" or ")}?` : ""}`
      )
    }
  }
  return { picked, notes }
}

export const searchTool = (scope: SearchScope): Tool =>
  defineTool({
    id: SEARCH_TOOL,
    description: `Find more tools by what they do, or load some by name with "select:a,b". Returns their schemas; ${
      scope.strategy === "bridge" ? "run one with tool_call." : "then call them directly."
    }`,
    parameters: SearchParams,
    concurrencySafe: true,
    retrySafe: true,
    permissions: { operations: ["session.read"] },
    execute: (args, ctx) =>
      Effect.gen(function* () {
        const pool = yield* scope.pool
        const names = selectNames(args.query)
        let matches: ReadonlyArray<Tool>
        const notes: Array<string> = []
        if (names !== undefined) {
          if (names.length === 0) {
            return yield* Effect.fail(fail('select: needs names, e.g. "select:mcp__github__create_issue,read".'))
          }
          const found = pick(names, pool, yield* scope.declared(ctx.sessionId))
          matches = found.picked
          notes.push(...found.notes)
        } else {
          matches = rankTools(args.query, pool, args.limit ?? SEARCH_LIMIT)
          if (matches.length === 0) {
            notes.push(
              `No tool matches "${args.query}" (${plural(pool.length, "tool")} can be searched). Try other words for the action or the service, or do it with the declared tools.`
            )
          }
        }
        scope.discover(
          ctx.sessionId,
          matches.map((t) => t.id)
        )
        const how =
          scope.strategy === "bridge"
            ? `Run one with ${CALL_TOOL} {"name": "<name>", "arguments": {…}}.`
            : "They are now declared: call them directly."
        const lines = matches.map((t) =>
          JSON.stringify({ name: t.id, description: t.description, input_schema: t.inputSchema })
        )
        const head =
          matches.length > 0 ? [`${matches.length} tool${matches.length === 1 ? "" : "s"} found. ${how}`] : []
        const output: ToolOutput = {
          title: `tool_search ${args.query}: ${matches.length} found`,
          output: [...head, ...lines, ...notes].join("\n"),
          metadata: { matches: matches.map((t) => t.id) }
        }
        return output
      })
  })

/** tool_call: names the call to run instead; the path prepares, authorizes and runs that one. */
export const callTool: Tool = defineTool({
  id: CALL_TOOL,
  description: "Run a tool found with tool_search.",
  parameters: CallParams,
  forwards: ({ name, arguments: args }) => {
    const lower = name.toLowerCase()
    if (lower !== SEARCH_TOOL && lower !== CALL_TOOL) return Result.succeed({ name, args: args ?? {} })
    const message = `Call ${name} directly, not through ${CALL_TOOL}.`
    return Result.fail(new InvalidArguments({ tool: CALL_TOOL, issues: [{ path: "name", message }], message }))
  },
  // Never run: a forwarding tool's call is replaced by the call it names.
  execute: () => Effect.fail(fail(`${CALL_TOOL} forwards its call; it has nothing of its own to run.`))
})
