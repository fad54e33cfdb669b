/**
 * A JSON Schema someone else wrote (an MCP server's inputSchema) made into one a model and every
 * provider can read: local `$ref`s (`#/$defs/…`, `#/definitions/…`, any JSON pointer) inlined,
 * recursion cut at a bounded depth, `allOf` merged into one object, `oneOf`/`anyOf` kept, the
 * document keywords (`$schema`, `$defs`, `definitions`, `$id`) dropped. Draft-07 and 2020-12 are
 * both read. Validation does not use this copy: it runs on the server's own schema (ajv), so a
 * lossy step here can only make the model's view vaguer, never let a bad call through.
 */
import { isRecord, type JsonSchema, type ObjectJsonSchema } from "./json-schema.ts"

export type Dialect = "draft-07" | "2020-12"

export interface Resolved {
  readonly schema: ObjectJsonSchema
  /** The dialect the document declared ($schema), draft-07 when it declared none. */
  readonly dialect: Dialect
  /** Lossy steps taken (a recursion cut, a remote $ref), for a warning. */
  readonly notes: ReadonlyArray<string>
}

/** Why a schema cannot be used at all. */
export class SchemaProblem extends Error {
  override readonly name = "SchemaProblem"
}

/** How many times one $ref may be expanded inside itself before it is cut. */
export const MAX_RECURSION = 2
/** A guard against pathological nesting in a hostile or generated schema. */
const MAX_DEPTH = 64

const DOCUMENT_KEYS = new Set(["$schema", "$id", "$defs", "definitions", "$comment", "$anchor", "$dynamicAnchor"])

export const dialectOf = (schema: unknown): Dialect => {
  const declared = isRecord(schema) && typeof schema.$schema === "string" ? schema.$schema : ""
  return /2020-12|2019-09/.test(declared) ? "2020-12" : "draft-07"
}

const decodePointerToken = (token: string): string => {
  let text = token
  try {
    text = decodeURIComponent(token)
  } catch {
    // not percent-encoded: use as is
  }
  return text.replace(/~1/g, "/").replace(/~0/g, "~")
}

/** Follows a local reference ("#", "#/$defs/X", "#/definitions/X/properties/y") in the root document. */
const follow = (root: Record<string, unknown>, ref: string): unknown => {
  if (ref === "#") return root
  let at: unknown = root
  for (const token of ref.slice(2).split("/").map(decodePointerToken)) {
    if (Array.isArray(at)) at = at[Number(token)]
    else if (isRecord(at)) at = at[token]
    else return undefined
  }
  return at
}

const typeSet = (type: unknown): ReadonlyArray<string> | undefined =>
  typeof type === "string" ? [type] : Array.isArray(type) ? (type as Array<string>) : undefined

const same = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b)

/**
 * Merges the parts of an allOf into one schema. What cannot be merged without changing the
 * meaning (two different `pattern`s, say) stays behind in a smaller allOf.
 */
export const mergeAllOf = (parts: ReadonlyArray<JsonSchema>): JsonSchema => {
  const out: Record<string, unknown> = {}
  const rest: Array<Record<string, unknown>> = []
  for (const part of parts) {
    const leftover: Record<string, unknown> = {}
    for (const [key, value] of Object.entries(part)) {
      const current = out[key]
      if (current === undefined) {
        out[key] = value
      } else if (key === "properties" && isRecord(current) && isRecord(value)) {
        const props: Record<string, unknown> = { ...current }
        for (const [name, sub] of Object.entries(value)) {
          const existing = props[name]
          props[name] =
            existing === undefined || same(existing, sub)
              ? sub
              : mergeAllOf([existing as JsonSchema, sub as JsonSchema])
        }
        out.properties = props
      } else if (key === "required" && Array.isArray(current) && Array.isArray(value)) {
        out.required = [...new Set([...current, ...value])]
      } else if (key === "type") {
        const a = typeSet(current)
        const b = typeSet(value)
        if (a === undefined || b === undefined) continue
        // "integer" is a number: {number} ∩ {integer} is integer.
        const both = a.flatMap((t) =>
          b.includes(t)
            ? [t]
            : t === "number" && b.includes("integer")
              ? ["integer"]
              : t === "integer" && b.includes("number")
                ? ["integer"]
                : []
        )
        const unique = [...new Set(both)]
        out.type = unique.length === 1 ? unique[0] : unique
      } else if (key === "enum" && Array.isArray(current) && Array.isArray(value)) {
        out.enum = current.filter((v) => value.some((w) => same(v, w)))
      } else if (key === "additionalProperties") {
        // The stricter one wins; two different sub-schemas are both enforced by the validator.
        if (value === false || current === false) out.additionalProperties = false
      } else if (key === "description" || key === "title") {
        if (current !== value) out[key] = `${current as string} ${value as string}`
      } else if (!same(current, value)) {
        leftover[key] = value
      }
    }
    if (Object.keys(leftover).length > 0) rest.push(leftover)
  }
  if (rest.length > 0) out.allOf = [...(Array.isArray(out.allOf) ? out.allOf : []), ...rest]
  return out as JsonSchema
}

interface Walk {
  readonly root: Record<string, unknown>
  readonly notes: Array<string>
  /** How many times each $ref is being expanded on the current path. */
  readonly active: Map<string, number>
}

const resolveNode = (node: unknown, walk: Walk, depth: number): unknown => {
  if (Array.isArray(node)) return node.map((n) => resolveNode(n, walk, depth + 1))
  if (!isRecord(node)) return node
  if (depth > MAX_DEPTH) {
    walk.notes.push(`nesting deeper than ${MAX_DEPTH} levels was cut`)
    return {}
  }

  let current: Record<string, unknown> = node
  if (typeof current.$ref === "string") {
    const ref = current.$ref
    const { $ref: _ref, ...siblings } = current
    if (!ref.startsWith("#")) {
      walk.notes.push(`the remote reference ${ref} was not followed`)
      return resolveNode(siblings, walk, depth + 1)
    }
    const target = follow(walk.root, ref)
    if (target === undefined) throw new SchemaProblem(`$ref ${ref} points at nothing in the schema`)
    const seen = walk.active.get(ref) ?? 0
    if (seen >= MAX_RECURSION) {
      walk.notes.push(`the recursive reference ${ref} was cut after ${MAX_RECURSION} levels`)
      const described = isRecord(target) && typeof target.description === "string" ? target.description : undefined
      return {
        ...(isRecord(target) && target.type !== undefined ? { type: target.type } : {}),
        description: `${described === undefined ? "" : `${described} `}(recursive: same shape as its parent)`
      }
    }
    walk.active.set(ref, seen + 1)
    try {
      const expanded = resolveNode(target, walk, depth + 1)
      // Keywords beside a $ref apply too (2020-12; common in draft-07 documents as well).
      const rest = resolveNode(siblings, walk, depth + 1) as Record<string, unknown>
      return Object.keys(rest).length === 0 ? expanded : mergeAllOf([expanded as JsonSchema, rest as JsonSchema])
    } finally {
      walk.active.set(ref, seen)
    }
  }

  const out: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(current)) {
    if (DOCUMENT_KEYS.has(key)) continue
    // Generated ±2^53 integer bounds (Zod, Effect) teach the model nothing and cost tokens.
    if (
      (key === "maximum" && value === Number.MAX_SAFE_INTEGER) ||
      (key === "minimum" && value === Number.MIN_SAFE_INTEGER)
    ) {
      continue
    }
    if ((key === "properties" || key === "patternProperties" || key === "dependentSchemas") && isRecord(value)) {
      // Property names are data: recurse into each value but keep every name.
      out[key] = Object.fromEntries(Object.entries(value).map(([k, v]) => [k, resolveNode(v, walk, depth + 1)]))
    } else if (key === "enum" || key === "const" || key === "default" || key === "examples" || key === "required") {
      out[key] = value
    } else {
      out[key] = resolveNode(value, walk, depth + 1)
    }
  }
  current = out
  if (Array.isArray(current.allOf) && current.allOf.every(isRecord)) {
    const { allOf, ...base } = current
    return mergeAllOf([base as JsonSchema, ...(allOf as Array<JsonSchema>)])
  }
  return current
}

/**
 * A top-level oneOf/anyOf of object shapes becomes one object (providers require `type: object`
 * at the top, and OpenAI refuses a top-level union): every property of every shape, required
 * only where all shapes require it, the alternatives named in the description.
 */
const flattenTopUnion = (schema: Record<string, unknown>): Record<string, unknown> => {
  const key = Array.isArray(schema.oneOf) ? "oneOf" : Array.isArray(schema.anyOf) ? "anyOf" : undefined
  if (key === undefined || schema.properties !== undefined) return schema
  const shapes = (schema[key] as Array<unknown>).filter(isRecord)
  if (shapes.length === 0 || !shapes.every((s) => s.type === undefined || s.type === "object")) return schema
  const properties: Record<string, unknown> = {}
  for (const shape of shapes) {
    for (const [name, sub] of Object.entries(isRecord(shape.properties) ? shape.properties : {})) {
      properties[name] ??= sub
    }
  }
  const requiredBy = (s: Record<string, unknown>) => (Array.isArray(s.required) ? (s.required as Array<string>) : [])
  const required = requiredBy(shapes[0]!).filter((r) => shapes.every((s) => requiredBy(s).includes(r)))
  const alternatives = shapes
    .map((s, i) => {
      const req = requiredBy(s)
      const props = Object.keys(isRecord(s.properties) ? s.properties : {})
      const names = req.length > 0 ? req : props
      return `(${i + 1}) ${typeof s.description === "string" ? `${s.description}: ` : ""}${names.join(", ") || "no arguments"}`
    })
    .join("; ")
  const { [key]: _union, ...rest } = schema
  const note = `${key === "oneOf" ? "Exactly one" : "At least one"} of these argument sets: ${alternatives}.`
  return {
    ...rest,
    type: "object",
    properties,
    ...(required.length > 0 ? { required } : {}),
    description: typeof rest.description === "string" ? `${rest.description} ${note}` : note
  }
}

/** Resolves a tool's input schema; throws SchemaProblem when it cannot describe an object. */
export const resolveSchema = (input: unknown): Resolved => {
  if (!isRecord(input)) throw new SchemaProblem(`the schema is ${JSON.stringify(input)}, not a JSON object`)
  const walk: Walk = { root: input, notes: [], active: new Map() }
  const resolved = resolveNode(input, walk, 0)
  if (!isRecord(resolved)) throw new SchemaProblem("the schema does not resolve to an object")
  const top = flattenTopUnion(resolved)
  const type = typeSet(top.type)
  if (type !== undefined && !type.includes("object")) {
    throw new SchemaProblem(`the schema's top-level type is ${JSON.stringify(top.type)}; a tool takes an object`)
  }
  if (top.properties !== undefined && !isRecord(top.properties)) {
    throw new SchemaProblem("the schema's properties is not an object")
  }
  const schema = { ...top, type: "object", properties: top.properties ?? {} } as ObjectJsonSchema
  return { schema, dialect: dialectOf(input), notes: [...new Set(walk.notes)] }
}

/**
 * Lowers unions for a provider dialect whose function schemas know only anyOf (Gemini's OpenAPI
 * subset): `oneOf` becomes `anyOf`. The validator still enforces "exactly one".
 */
export const lowerOneOf = (schema: unknown): unknown => {
  if (Array.isArray(schema)) return schema.map(lowerOneOf)
  if (!isRecord(schema)) return schema
  const out: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(schema)) {
    if (key === "properties" && isRecord(value)) {
      out[key] = Object.fromEntries(Object.entries(value).map(([k, v]) => [k, lowerOneOf(v)]))
    } else if (key === "oneOf") {
      out.anyOf = lowerOneOf(value)
    } else {
      out[key] = lowerOneOf(value)
    }
  }
  return out
}
