/**
 * Gemini's `parameters`: an OpenAPI 3.0 subset. No `$ref` (definitions are inlined), no type
 * arrays (a null member becomes `nullable`, several types become anyOf), enums of strings only,
 * `required` naming only properties that exist, anyOf but no oneOf/allOf, a short list of string
 * and number formats, and nothing outside the keywords it knows.
 */
import { isRecord } from "../json-schema.ts"
import { mergeAllOf } from "../resolve.ts"
import { Changes, type Compiled, mapSchema, typesOf } from "./report.ts"

/** The Schema fields Gemini's function declarations accept. */
const KNOWN = new Set([
  "type",
  "format",
  "title",
  "description",
  "nullable",
  "enum",
  "maxItems",
  "minItems",
  "properties",
  "required",
  "minProperties",
  "maxProperties",
  "minLength",
  "maxLength",
  "pattern",
  "example",
  "anyOf",
  "propertyOrdering",
  "default",
  "items",
  "minimum",
  "maximum"
])

const FORMATS: Readonly<Record<string, ReadonlyArray<string>>> = {
  string: ["enum", "date-time"],
  integer: ["int32", "int64"],
  number: ["float", "double"]
}

/** How deep a recursive `$ref` is inlined before it is cut to a plain object. */
const MAX_INLINE = 3

/** Inlines local `$ref`s (`#/$defs/x`, `#/definitions/x`), recursion cut at MAX_INLINE. */
const inline = (root: Record<string, unknown>, changes: Changes): unknown => {
  const defs = { ...(isRecord(root.definitions) ? root.definitions : {}), ...(isRecord(root.$defs) ? root.$defs : {}) }
  const walk = (node: unknown, path: string, depth: number): unknown => {
    if (Array.isArray(node)) return node.map((n, i) => walk(n, `${path}[${i}]`, depth))
    if (!isRecord(node)) return node
    if (typeof node.$ref === "string") {
      const name = /^#\/(?:\$defs|definitions)\/(.+)$/.exec(node.$ref)?.[1]
      const target = name === undefined ? undefined : defs[decodeURIComponent(name)]
      const { $ref: _, ...rest } = node
      if (!isRecord(target) || depth >= MAX_INLINE) {
        changes.rewrote(
          path,
          "$ref",
          target === undefined ? `unresolvable ${node.$ref}: any object` : "recursion cut: any object"
        )
        return { type: "object", ...rest }
      }
      changes.rewrote(path, "$ref", `inlined ${node.$ref}`)
      return walk({ ...target, ...rest }, path, depth + 1)
    }
    const out: Record<string, unknown> = {}
    for (const [key, value] of Object.entries(node)) {
      if (key === "$defs" || key === "definitions") continue
      // enum/const/default/example values are data, not schemas.
      out[key] =
        key === "enum" || key === "const" || key === "default" || key === "example"
          ? value
          : walk(value, path === "" ? key : `${path}.${key}`, depth)
    }
    return out
  }
  return walk(root, "", 0)
}

export const compileGemini = (schema: Record<string, unknown>): Compiled => {
  const changes = new Changes()
  if (isRecord(schema.$defs)) changes.dropped("", "$defs")
  if (isRecord(schema.definitions)) changes.dropped("", "definitions")
  const inlined = inline(schema, changes)
  const compiled = mapSchema(inlined, "", (node, path) => {
    let out: Record<string, unknown> = { ...node }
    if (out.oneOf !== undefined) {
      const { oneOf, ...rest } = out
      out = { ...rest, anyOf: oneOf }
      changes.rewrote(path, "oneOf", "anyOf (the validator still allows exactly one)")
    }
    if (Array.isArray(out.allOf)) {
      const { allOf, ...rest } = out
      out = mergeAllOf([rest, ...(allOf as Array<Record<string, unknown>>)]) as Record<string, unknown>
      changes.rewrote(path, "allOf", "merged into one schema")
    }
    if ("const" in out) {
      const { const: value, ...rest } = out
      out = { ...rest, enum: [value] }
      changes.rewrote(path, "const", "a one-value enum")
    }
    if (Array.isArray(out.type)) {
      const types = typesOf(out)
      const real = types.filter((t) => t !== "null")
      const { type: _, ...rest } = out
      out =
        real.length <= 1
          ? { ...(real.length === 1 ? { type: real[0] } : {}), ...rest }
          : { ...rest, anyOf: real.map((t) => ({ type: t })) }
      if (types.includes("null")) out.nullable = true
      changes.rewrote(
        path,
        "type",
        `${JSON.stringify(types)} as ${real.length <= 1 ? "one type" : "anyOf"}${types.includes("null") ? " + nullable" : ""}`
      )
    }
    if (Array.isArray(out.enum)) {
      const values = out.enum.filter((v) => v !== null)
      if (values.length < out.enum.length) out.nullable = true
      if (values.some((v) => typeof v !== "string") || out.type !== "string") {
        out.enum = values.map((v) => (typeof v === "string" ? v : JSON.stringify(v)))
        if (out.type !== "string") {
          out.type = "string"
          changes.rewrote(path, "enum", "values as strings, type string")
        }
      } else out.enum = values
    }
    if (typeof out.format === "string") {
      const allowed = FORMATS[typeof out.type === "string" ? out.type : ""] ?? []
      if (!allowed.includes(out.format)) {
        delete out.format
        changes.dropped(path, "format")
      }
    }
    if (isRecord(out.properties) && Object.keys(out.properties).length === 0) {
      delete out.properties
      changes.dropped(path, "properties")
    }
    if (Array.isArray(out.required)) {
      const names = isRecord(out.properties) ? Object.keys(out.properties) : []
      const kept = (out.required as Array<string>).filter((n) => names.includes(n))
      if (kept.length < out.required.length) changes.rewrote(path, "required", `kept only existing properties`)
      if (kept.length > 0) out.required = kept
      else delete out.required
    }
    for (const key of Object.keys(out)) {
      if (!KNOWN.has(key)) {
        delete out[key]
        changes.dropped(path, key)
      }
    }
    return out
  }) as Record<string, unknown>
  return { schema: compiled, changes: changes.list }
}
