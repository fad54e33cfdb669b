/**
 * Whether a tool changes nothing: no project file, no process, no state that outlives the call.
 * One predicate for what a client is told (MCP's readOnlyHint) and what the `read-only` profile
 * serves, so they cannot disagree. A tool that writes session state (memory's files, todowrite's
 * list) changes something: it is neither read-only to a client nor served by `read-only`.
 */
import type { Tool } from "./tool.ts"

export const changesNothing = (tool: Pick<Tool, "mutates" | "operations">): boolean =>
  !tool.mutates && !tool.operations.includes("session.write")
