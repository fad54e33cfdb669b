/**
 * OpenAI's strict mode (Structured Outputs for function calling): every object closed with
 * `additionalProperties: false`, every property listed in `required` (an optional one becomes
 * nullable instead), no oneOf/allOf (anyOf only), and none of the keywords strict mode rejects.
 *
 * An open map (`additionalProperties: true` or a schema) cannot be expressed: the compiled tool is
 * then `strict: false` and keeps its own schema, rather than one that refuses every key.
 */
import { isRecord } from "../json-schema.ts"
import { mergeAllOf } from "../resolve.ts"
import { Changes, type Compiled, isObjectNode, mapSchema, typesOf } from "./report.ts"
import { flattenTop } from "./top-level.ts"

/** Keywords strict mode rejects (its documented subset, conservatively). */
const UNSUPPORTED = new Set([
  "$schema",
  "$id",
  "format",
  "pattern",
  "minLength",
  "maxLength",
  "minimum",
  "maximum",
  "exclusiveMinimum",
  "exclusiveMaximum",
  "multipleOf",
  "minItems",
  "maxItems",
  "uniqueItems",
  "minProperties",
  "maxProperties",
  "patternProperties",
  "propertyNames",
  "unevaluatedProperties",
  "dependentRequired",
  "dependentSchemas",
  "contains",
  "not",
  "if",
  "then",
  "else",
  "default",
  "examples",
  "readOnly",
  "writeOnly",
  "deprecated"
])

export interface CompiledStrict extends Compiled {
  /** False when the schema cannot be strict without changing what it accepts (an open map). */
  readonly strict: boolean
}

const nullable = (node: unknown): unknown => {
  if (!isRecord(node)) return node
  const types = typesOf(node)
  if (types.includes("null")) return node
  if (Array.isArray(node.anyOf)) return { ...node, anyOf: [...node.anyOf, { type: "null" }] }
  if (types.length > 0) {
    const withEnum = Array.isArray(node.enum) && !node.enum.includes(null) ? { enum: [...node.enum, null] } : {}
    return { ...node, type: [...types, "null"], ...withEnum }
  }
  return { anyOf: [node, { type: "null" }] }
}

export const compileOpenAIStrict = (schema: Record<string, unknown>): CompiledStrict => {
  const changes = new Changes()
  let open = false
  const top = flattenTop(schema, changes)
  const compiled = mapSchema(top, "", (node, path) => {
    let out: Record<string, unknown> = {}
    for (const [key, value] of Object.entries(node)) {
      if (UNSUPPORTED.has(key)) changes.dropped(path, key)
      else if (key === "oneOf") {
        out.anyOf = value
        changes.rewrote(path, "oneOf", "anyOf (the validator still allows exactly one)")
      } else out[key] = value
    }
    if (Array.isArray(out.allOf)) {
      const { allOf, ...rest } = out
      out = mergeAllOf([rest, ...(allOf as Array<Record<string, unknown>>)]) as Record<string, unknown>
      changes.rewrote(path, "allOf", "merged into one schema")
    }
    if (!isObjectNode(out)) return out
    const extra = out.additionalProperties
    // An object that names no properties and does not close itself takes any keys (JSON Schema's
    // default), like tool_call's `arguments`: closing it would leave a model nothing to send.
    const unnamed = extra === undefined && !("properties" in out) && !("patternProperties" in out)
    if (extra === true || isRecord(extra) || unnamed) {
      open = true
      changes.rewrote(
        path,
        "additionalProperties",
        "an open map cannot be strict: this tool is sent with strict: false"
      )
    }
    const properties = isRecord(out.properties) ? out.properties : {}
    const required = new Set(Array.isArray(out.required) ? (out.required as Array<string>) : [])
    const optional = Object.keys(properties).filter((name) => !required.has(name))
    if (optional.length > 0) {
      changes.rewrote(path, "required", `optional ${optional.join(", ")} now required and nullable (send null to omit)`)
    }
    return {
      ...out,
      properties: Object.fromEntries(
        Object.entries(properties).map(([name, sub]) => [name, required.has(name) ? sub : nullable(sub)])
      ),
      required: Object.keys(properties),
      additionalProperties: false
    }
  }) as Record<string, unknown>
  return { schema: compiled, changes: changes.list, strict: !open }
}

/**
 * What a strict-mode model sends for an optional property it leaves out is `null`. Removes those
 * nulls (for properties the tool does not require and whose schema does not accept null), at
 * every level, so the tool's own validator sees the call it was declared for.
 */
export const dropStrictNulls = (schema: unknown, value: unknown): unknown => {
  if (!isRecord(schema)) return value
  if (Array.isArray(value)) {
    return isRecord(schema.items) ? value.map((v) => dropStrictNulls(schema.items, v)) : value
  }
  if (!isRecord(value) || !isRecord(schema.properties)) return value
  const required = new Set(Array.isArray(schema.required) ? (schema.required as Array<string>) : [])
  const out: Record<string, unknown> = {}
  for (const [key, v] of Object.entries(value)) {
    const sub = schema.properties[key]
    if (v === null && !required.has(key) && !(isRecord(sub) && typesOf(sub).includes("null"))) continue
    out[key] = dropStrictNulls(sub, v)
  }
  return out
}
