/**
 * The typed API a program sees: each tool as a TypeScript signature generated from its JSON
 * Schema (`read(args: { filePath: string; offset?: number })`), and the identifier it has on
 * `tools`. Compact on purpose: the signatures go into the tool's description, which is paid on
 * every request; descriptions of properties are left out, and so is the return type, the same
 * for every tool and said once in the description's intro (15 times `: Promise<ToolValue>` cost
 * 75 tokens).
 */
import type { JsonSchema } from "../schema/json-schema.ts"
import type { Tool } from "../tool/tool.ts"

/** Names on `tools` that are not tools. */
const RESERVED = new Set(["call", "search", "constructor", "prototype", "__proto__", "toString", "valueOf"])

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/

/** A tool's identifier on `tools`, or undefined when it has none (then: tools.call(name, args)). */
export const identifierOf = (id: string): string | undefined => {
  const made = id.replace(/[^A-Za-z0-9_$]/g, "_").replace(/^([0-9])/, "_$1")
  return IDENTIFIER.test(made) && !RESERVED.has(made) ? made : undefined
}

/** [identifier, tool id] for every tool with a unique identifier, in the given order. */
export const identifiers = (tools: ReadonlyArray<Tool>): Array<readonly [string, string]> => {
  const seen = new Map<string, number>()
  for (const t of tools) {
    const id = identifierOf(t.id)
    if (id !== undefined) seen.set(id, (seen.get(id) ?? 0) + 1)
  }
  return tools.flatMap((t) => {
    const id = identifierOf(t.id)
    return id === undefined || seen.get(id) !== 1 ? [] : [[id, t.id] as const]
  })
}

const MAX_DEPTH = 4

const literal = (v: unknown): string => JSON.stringify(v) ?? "unknown"

/** A JSON Schema as a TypeScript type, cut to `unknown` past a few levels. */
export const typeOf = (schema: JsonSchema | boolean | undefined, depth = 0): string => {
  if (schema === undefined || schema === true) return "unknown"
  if (schema === false) return "never"
  const s = schema as Record<string, unknown>
  if (depth > MAX_DEPTH) return "unknown"
  if (Array.isArray(s.enum)) return s.enum.map(literal).join(" | ")
  if ("const" in s) return literal(s.const)
  const union = (s.anyOf ?? s.oneOf) as ReadonlyArray<JsonSchema> | undefined
  if (Array.isArray(union)) return union.map((b) => typeOf(b, depth + 1)).join(" | ")
  const type = s.type
  if (Array.isArray(type)) return type.map((t) => typeOf({ ...s, type: t } as JsonSchema, depth)).join(" | ")
  switch (type) {
    case "string":
      return "string"
    case "integer":
    case "number":
      return "number"
    case "boolean":
      return "boolean"
    case "null":
      return "null"
    case "array": {
      const item = typeOf(s.items as JsonSchema | undefined, depth + 1)
      return /[|&]/.test(item) ? `Array<${item}>` : `${item}[]`
    }
    case "object":
      return objectType(s, depth)
    default:
      return s.properties !== undefined ? objectType(s, depth) : "unknown"
  }
}

const objectType = (s: Record<string, unknown>, depth: number): string => {
  const props = (s.properties ?? {}) as Record<string, JsonSchema>
  const required = new Set((s.required ?? []) as ReadonlyArray<string>)
  const keys = Object.keys(props)
  if (keys.length === 0) return "Record<string, unknown>"
  const fields = keys.map((k) => {
    const name = IDENTIFIER.test(k) ? k : JSON.stringify(k)
    return `${name}${required.has(k) ? "" : "?"}: ${typeOf(props[k], depth + 1)}`
  })
  return `{ ${fields.join("; ")} }`
}

/** A full stop that ends an abbreviation ("e.g.", "i.e."), not a sentence. */
const ABBREVIATION = /\b(e\.g|i\.e|etc|vs|cf)$/i

/** The first sentence of a description, at most `max` characters. */
export const firstSentence = (text: string, max = 120): string => {
  const line = text.split("\n")[0]!.trim()
  let end = -1
  for (const m of line.matchAll(/[.!?](?=\s|$)/g)) {
    if (!ABBREVIATION.test(line.slice(0, m.index))) {
      end = m.index
      break
    }
  }
  const sentence = end === -1 ? line : line.slice(0, end + 1)
  return sentence.length <= max ? sentence : `${sentence.slice(0, max - 1)}…`
}

/** One tool's line of the API: its summary as a comment, then its signature. */
export const signatureOf = (identifier: string, tool: Tool): string =>
  `  /** ${firstSentence(tool.description)} */\n  ${identifier}(args: ${typeOf(tool.inputSchema)})`
