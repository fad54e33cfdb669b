/**
 * What a dialect compiler changed, so a person can see why a provider gets a different schema
 * than the tool declared: each keyword dropped or rewritten, at its path in the schema.
 */
import { isRecord } from "../json-schema.ts"

export interface DialectChange {
  /** Where, as keywords and property names from the root, e.g. `properties.url.format`. */
  readonly path: string
  readonly keyword: string
  readonly action: "dropped" | "rewrote"
  /** What was done instead, when it was rewritten. */
  readonly detail?: string
}

export interface Compiled {
  readonly schema: Record<string, unknown>
  readonly changes: ReadonlyArray<DialectChange>
}

export class Changes {
  readonly list: Array<DialectChange> = []
  dropped(path: string, keyword: string) {
    this.list.push({ path: at(path, keyword), keyword, action: "dropped" })
  }
  rewrote(path: string, keyword: string, detail: string) {
    this.list.push({ path: at(path, keyword), keyword, action: "rewrote", detail })
  }
}

export const at = (path: string, key: string): string => (path === "" ? key : `${path}.${key}`)

/** Keywords whose value is a map of name → schema (the names are data, never keywords). */
export const SCHEMA_MAPS = new Set(["properties", "$defs", "definitions", "patternProperties", "dependentSchemas"])
/** Keywords whose value is a list of schemas. */
export const SCHEMA_LISTS = new Set(["anyOf", "oneOf", "allOf", "prefixItems"])
/** Keywords whose value is one schema. */
export const SCHEMA_ONE = new Set([
  "items",
  "additionalProperties",
  "not",
  "if",
  "then",
  "else",
  "contains",
  "propertyNames",
  "unevaluatedProperties",
  "additionalItems"
])

/**
 * Rebuilds a schema bottom-up: `each` rewrites one schema node after its subschemas were
 * rewritten with the same function. Values that are not schemas (enum, const, default) are kept.
 */
export const mapSchema = (
  schema: unknown,
  path: string,
  each: (node: Record<string, unknown>, path: string) => Record<string, unknown>
): unknown => {
  if (!isRecord(schema)) return schema
  const out: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(schema)) {
    const here = at(path, key)
    if (SCHEMA_MAPS.has(key) && isRecord(value)) {
      out[key] = Object.fromEntries(Object.entries(value).map(([k, v]) => [k, mapSchema(v, at(here, k), each)]))
    } else if (SCHEMA_LISTS.has(key) && Array.isArray(value)) {
      out[key] = value.map((v, i) => mapSchema(v, `${here}[${i}]`, each))
    } else if (SCHEMA_ONE.has(key) && (isRecord(value) || Array.isArray(value))) {
      out[key] = Array.isArray(value)
        ? value.map((v, i) => mapSchema(v, `${here}[${i}]`, each))
        : mapSchema(value, here, each)
    } else {
      out[key] = value
    }
  }
  return each(out, path)
}

export const typesOf = (node: Record<string, unknown>): ReadonlyArray<string> =>
  typeof node.type === "string" ? [node.type] : Array.isArray(node.type) ? (node.type as Array<string>) : []

export const isObjectNode = (node: Record<string, unknown>): boolean =>
  typesOf(node).includes("object") || (node.type === undefined && isRecord(node.properties))
