/**
 * Anthropic's `input_schema`: JSON Schema 2020-12, with one limit that real MCP servers break —
 * no oneOf/anyOf/allOf at the top level, which must be an object. Everything below is kept.
 */
import { Changes, type Compiled } from "./report.ts"
import { flattenTop } from "./top-level.ts"

export const compileAnthropic = (schema: Record<string, unknown>): Compiled => {
  const changes = new Changes()
  return { schema: flattenTop(schema, changes), changes: changes.list }
}
