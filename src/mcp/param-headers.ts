/**
 * `Mcp-Param-*` headers (2026-07-28 streamable HTTP, SEP-2243): a tool may mark parameters of its
 * input schema with `x-mcp-header: NAME`, and a client calling it over HTTP repeats each such
 * argument in an `Mcp-Param-NAME` header, so a load balancer or gateway can route on it without
 * reading the body. The server checks the headers against the body and refuses a call whose
 * headers disagree, so they must be exact: strings as they are when they are plain visible
 * ASCII, else `=?base64?…?=` of their UTF-8; integers in decimal; booleans `true`/`false`; an
 * absent or null argument, no header.
 *
 * A declaration is valid only on a `string`, `integer` or `boolean` property reached from the
 * root through `properties` alone, with a name that is an HTTP token, unique regardless of case.
 * A tool that declares one anywhere else cannot be called correctly, so it is not offered
 * (list.ts), with the reason.
 */
import { isRecord } from "../schema/json-schema.ts"

export interface ParamHeader {
  /** The argument's path from the root of the arguments object. */
  readonly path: ReadonlyArray<string>
  /** The header is `Mcp-Param-${name}`. */
  readonly name: string
}

export type HeaderDeclarations =
  | { readonly ok: true; readonly headers: ReadonlyArray<ParamHeader> }
  | { readonly ok: false; readonly reason: string }

const ANNOTATION = "x-mcp-header"

/** RFC 9110 `token`: no spaces, controls or delimiters. */
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/

const HEADER_TYPES = new Set(["string", "integer", "boolean"])

/** Subschemas a `properties` chain never passes through: an annotation under one is misplaced. */
const SINGLE_OR_LIST = ["items", "prefixItems", "contains", "additionalProperties", "unevaluatedProperties"]
const MORE = ["unevaluatedItems", "propertyNames", "oneOf", "anyOf", "allOf", "not", "if", "then", "else"]
const NAMED = ["patternProperties", "dependentSchemas", "$defs", "definitions"]

const where = (path: ReadonlyArray<string>) => (path.length === 0 ? "the schema's root" : path.join("."))

/** The `x-mcp-header` declarations of `schema`, or why they are invalid. */
export const headerDeclarations = (schema: Record<string, unknown>): HeaderDeclarations => {
  const headers: Array<ParamHeader> = []
  const seen = new Map<string, string>()
  const visit = (node: unknown, path: ReadonlyArray<string>, reachable: boolean): string | undefined => {
    if (!isRecord(node)) return undefined
    if (ANNOTATION in node) {
      const name = node[ANNOTATION]
      if (!reachable || path.length === 0) {
        return `${where(path)} carries x-mcp-header, which belongs only on a property reached through "properties"`
      }
      if (typeof name !== "string" || name === "") return `${where(path)}: x-mcp-header must be a non-empty string`
      if (!TOKEN.test(name)) return `${where(path)}: x-mcp-header ${JSON.stringify(name)} is not an HTTP header token`
      const type = node.type
      if (typeof type !== "string" || !HEADER_TYPES.has(type)) {
        return `${where(path)}: x-mcp-header is allowed on string, integer and boolean properties only (this one is ${typeof type === "string" ? type : "untyped"})`
      }
      const before = seen.get(name.toLowerCase())
      if (before !== undefined)
        return `x-mcp-header ${JSON.stringify(name)} is declared twice (also as ${JSON.stringify(before)})`
      seen.set(name.toLowerCase(), name)
      headers.push({ path, name })
    }
    if (isRecord(node.properties)) {
      for (const [key, child] of Object.entries(node.properties)) {
        const fault = visit(child, [...path, key], reachable)
        if (fault !== undefined) return fault
      }
    }
    for (const key of [...SINGLE_OR_LIST, ...MORE, ...NAMED]) {
      const sub = node[key]
      if (sub === undefined) continue
      const branches = Array.isArray(sub) ? sub : NAMED.includes(key) && isRecord(sub) ? Object.values(sub) : [sub]
      for (const branch of branches) {
        const fault = visit(branch, [...path, `(${key})`], false)
        if (fault !== undefined) return fault
      }
    }
    return undefined
  }
  const fault = visit(schema, [], true)
  return fault === undefined ? { ok: true, headers } : { ok: false, reason: fault }
}

const SENTINEL = /^=\?base64\?.*\?=$/s

/** A string sent as it is only when a header carries it unchanged: visible ASCII (and tabs inside), no edge spaces. */
const plain = (text: string) =>
  text !== "" && text === text.trim() && !SENTINEL.test(text) && /^[\t\x20-\x7e]*$/.test(text)

const encode = (text: string) => (plain(text) ? text : `=?base64?${Buffer.from(text, "utf8").toString("base64")}?=`)

const valueText = (value: unknown): string | undefined => {
  if (typeof value === "string") return value
  if (typeof value === "boolean") return value ? "true" : "false"
  if (typeof value === "number" && Number.isSafeInteger(value)) return String(value)
  // Anything else is not what the schema allows: no header, and the server's validation answers.
  return undefined
}

/** The `Mcp-Param-*` headers for one call with `args`. */
export const paramHeaders = (headers: ReadonlyArray<ParamHeader>, args: unknown): Record<string, string> => {
  const out: Record<string, string> = {}
  for (const header of headers) {
    let value: unknown = args
    for (const key of header.path) value = isRecord(value) ? value[key] : undefined
    if (value === undefined || value === null) continue
    const text = valueText(value)
    if (text !== undefined) out[`Mcp-Param-${header.name}`] = encode(text)
  }
  return out
}
