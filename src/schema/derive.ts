/**
 * A tool's parameter JSON Schema, derived once from its Effect Schema. Trimmed of noise the
 * model pays for on every request without learning anything (Int's ±2^53 bounds).
 */
import { Schema } from "effect"
import { isRecord, type ObjectJsonSchema } from "./json-schema.ts"

const NOISE: ReadonlyArray<readonly [string, number]> = [
  ["maximum", Number.MAX_SAFE_INTEGER],
  ["minimum", Number.MIN_SAFE_INTEGER]
]

const clean = (schema: unknown): unknown => {
  if (Array.isArray(schema)) return schema.map(clean)
  if (!isRecord(schema)) return schema
  const out: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(schema)) {
    if (NOISE.some(([k, v]) => k === key && value === v)) continue
    out[key] = clean(value)
  }
  return out
}

export const deriveParameters = (id: string, parameters: Schema.Top): ObjectJsonSchema => {
  const document = Schema.toJsonSchemaDocument(parameters, { onExcessProperty: "error" })
  // An empty Struct means "no arguments"; effect renders it as "anything but null".
  const empty = "fields" in parameters && isRecord(parameters.fields) && Object.keys(parameters.fields).length === 0
  const schema = empty ? { type: "object", properties: {}, additionalProperties: false } : clean(document.schema)
  if (!isRecord(schema) || schema.type !== "object") throw new Error(`tool ${id}: parameters must be a Schema.Struct`)
  const definitions = Object.keys(document.definitions).length > 0 ? { $defs: clean(document.definitions) } : {}
  return { properties: {}, ...schema, ...definitions } as ObjectJsonSchema
}
