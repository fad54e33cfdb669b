/**
 * Repairs values a provider quoted ({"head_limit": "30"}), keyed off the declared JSON Schema
 * type. Deliberately narrow: only an unambiguous numeric literal or exactly "true"/"false"
 * converts, and a string where only an object (or only an array) is declared when it parses as
 * JSON of that shape (models send nested arguments as a string). Number() and truthiness would
 * turn "" into 0 and "false" into true, hiding a malformed call instead of letting the
 * validator report it. The walk follows the schema, so it is as deep as the schema, no deeper.
 */
import { exceedsDepth, MAX_ARGUMENT_DEPTH } from "./depth.ts"
import { isRecord, type JsonSchema } from "./json-schema.ts"

const NUMERIC = /^-?\d+(\.\d+)?$/

export interface Coerced {
  readonly value: unknown
  /** The paths that were converted, e.g. ["head_limit", "todos[0].priority"]. */
  readonly paths: ReadonlyArray<string>
}

const typesOf = (schema: JsonSchema): ReadonlyArray<string> =>
  schema.type === undefined ? [] : typeof schema.type === "string" ? [schema.type] : schema.type

const coerceScalar = (schema: JsonSchema, value: string): unknown => {
  const types = typesOf(schema)
  // A property that also accepts strings is already valid as it came.
  if (types.includes("string")) return value
  if ((types.includes("number") || types.includes("integer")) && NUMERIC.test(value)) return Number(value)
  if (types.includes("boolean") && (value === "true" || value === "false")) return value === "true"
  if (types.length === 1 && (types[0] === "object" || types[0] === "array")) return parsedAs(types[0], value)
  return value
}

/** A JSON string of the one declared shape, parsed; anything else stays as it came. */
const parsedAs = (type: string, value: string): unknown => {
  const text = value.trim()
  if (!text.startsWith(type === "object" ? "{" : "[")) return value
  try {
    const parsed: unknown = JSON.parse(text)
    const fits = type === "object" ? isRecord(parsed) : Array.isArray(parsed)
    return fits && !exceedsDepth(parsed, MAX_ARGUMENT_DEPTH) ? parsed : value
  } catch {
    return value
  }
}

const join = (base: string, key: string | number): string =>
  typeof key === "number" ? `${base}[${key}]` : base === "" ? key : `${base}.${key}`

const walk = (schema: JsonSchema | undefined, value: unknown, at: string, paths: Array<string>): unknown => {
  if (schema === undefined) return value
  if (typeof value === "string") {
    const out = coerceScalar(schema, value)
    if (out === value) return value
    paths.push(at === "" ? "(arguments)" : at)
    // An object or array that came as a string may hold quoted scalars of its own.
    return typeof out === "object" ? walk(schema, out, at, []) : out
  }
  if (Array.isArray(value)) {
    const items = schema.items
    if (items === undefined) return value
    return value.map((v, i) => walk(Array.isArray(items) ? items[i] : (items as JsonSchema), v, join(at, i), paths))
  }
  if (isRecord(value) && schema.properties !== undefined) {
    const out: Record<string, unknown> = {}
    for (const [key, v] of Object.entries(value)) out[key] = walk(schema.properties[key], v, join(at, key), paths)
    return out
  }
  return value
}

export const coerceArgs = (schema: JsonSchema, args: unknown): Coerced => {
  const paths: Array<string> = []
  const value = walk(schema, args, "", paths)
  return { value, paths }
}
