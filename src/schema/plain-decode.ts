/**
 * A fast check for a tool's arguments, when its parameter schema is plain JSON: objects, arrays,
 * strings, numbers, booleans, literals and unions of them, with filters (`Schema.Int`,
 * `isGreaterThan`) but no transformation. For such a schema, Schema's decode of valid input is
 * the input itself, so an input this check accepts needs no decode. The check is compiled once
 * per schema from its AST into plain closures; every call of a tool passes through it, and
 * Schema's general parser costs some 5 µs of a call in a tight loop and several times that when
 * the call finds its caches cold, as a server's calls do.
 *
 * It only ever says yes for input the decode accepts unchanged (test/schema/plain-decode.test.ts
 * checks that against Schema for every built-in tool); a no sends the input to the real decode,
 * which says what is wrong. A schema with anything else in it (a transformation, a tuple, a
 * record, a symbol key, a check of an unknown kind) gets no fast check at all. Input it accepts
 * is handed on as a copy (`copyPlain`), as the decode's would be: the arguments that were checked
 * and decided on are then the tool's own, whatever the caller or a hook does with its object.
 *
 * The AST is read through `SchemaAST`, public API of `effect` (marked `@stability stable`), not
 * its internals: every field read here (`_tag`, `checks` and a `Filter`'s `run`, `encoding`,
 * `encodingChecks`, `propertySignatures`, `indexSignatures`, `elements`, `rest`, `types`,
 * `literal`, `isOptional`) is declared and documented in its type declarations.
 */
import { SchemaAST } from "effect"

/** Whether the input is valid and decodes to itself. */
export type PlainCheck = (input: unknown) => boolean

type Check = (input: unknown, ast: SchemaAST.AST, options: SchemaAST.ParseOptions) => unknown

/** The schema's own filters, run as its decode runs them (a filter answers undefined when it passes). */
const withFilters = (
  ast: SchemaAST.AST,
  check: PlainCheck,
  options: SchemaAST.ParseOptions
): PlainCheck | undefined => {
  const filters = ast.checks
  if (filters === undefined || filters.length === 0) return check
  const runs: Array<Check> = []
  for (const filter of filters) {
    if (filter._tag !== "Filter") return undefined
    runs.push(filter.run as Check)
  }
  return (input) => {
    if (!check(input)) return false
    for (const run of runs) if (run(input, ast, options) !== undefined) return false
    return true
  }
}

/** An object as JSON.parse makes them (the decode makes one of those from anything else). */
const isPlainObject = (input: unknown): input is Record<string, unknown> =>
  typeof input === "object" && input !== null && Object.getPrototypeOf(input) === Object.prototype

const objects = (ast: SchemaAST.Objects, options: SchemaAST.ParseOptions): PlainCheck | undefined => {
  if (ast.indexSignatures.length > 0 || (ast.encodingChecks?.length ?? 0) > 0) return undefined
  const properties: Array<{ readonly name: string; readonly optional: boolean; readonly check: PlainCheck }> = []
  for (const p of ast.propertySignatures) {
    if (typeof p.name !== "string") return undefined
    const check = compile(p.type, options)
    if (check === undefined) return undefined
    properties.push({ name: p.name, optional: SchemaAST.isOptional(p.type), check })
  }
  return (input) => {
    if (!isPlainObject(input)) return false
    let present = 0
    for (const p of properties) {
      if (!Object.hasOwn(input, p.name)) {
        if (!p.optional) return false
        continue
      }
      present++
      if (!p.check(input[p.name])) return false
    }
    // Nothing else: an excess property is an error in the tools' decode, and a symbol key is left to it.
    return Object.keys(input).length === present && Object.getOwnPropertySymbols(input).length === 0
  }
}

const arrays = (ast: SchemaAST.Arrays, options: SchemaAST.ParseOptions): PlainCheck | undefined => {
  if (ast.elements.length > 0 || ast.rest.length !== 1 || (ast.encodingChecks?.length ?? 0) > 0) return undefined
  const item = compile(ast.rest[0]!, options)
  if (item === undefined) return undefined
  return (input) => {
    if (!Array.isArray(input)) return false
    // By index, not every(): a hole is an undefined item, as the decode reads it.
    for (let i = 0; i < input.length; i++) if (!item(input[i])) return false
    return true
  }
}

const union = (ast: SchemaAST.Union, options: SchemaAST.ParseOptions): PlainCheck | undefined => {
  if ((ast.encodingChecks?.length ?? 0) > 0) return undefined
  const members: Array<PlainCheck> = []
  for (const t of ast.types) {
    const check = compile(t, options)
    if (check === undefined) return undefined
    members.push(check)
  }
  return (input) => members.some((m) => m(input))
}

const compileNode = (ast: SchemaAST.AST, options: SchemaAST.ParseOptions): PlainCheck | undefined => {
  switch (ast._tag) {
    case "String":
      return (input) => typeof input === "string"
    case "Number":
      return (input) => typeof input === "number"
    case "Boolean":
      return (input) => typeof input === "boolean"
    case "Undefined":
      return (input) => input === undefined
    case "Null":
      return (input) => input === null
    case "Literal": {
      const literal = ast.literal
      return (input) => input === literal
    }
    case "Objects":
      return objects(ast, options)
    case "Arrays":
      return arrays(ast, options)
    case "Union":
      return union(ast, options)
    default:
      return undefined
  }
}

const compile = (ast: SchemaAST.AST, options: SchemaAST.ParseOptions): PlainCheck | undefined => {
  if (ast.encoding !== undefined) return undefined
  const check = compileNode(ast, options)
  return check === undefined ? undefined : withFilters(ast, check, options)
}

/**
 * The fast check for a schema, or undefined when it is not plain JSON. `options`: those the
 * decode runs with (its filters are handed them).
 */
export const plainCheck = (ast: SchemaAST.AST, options: SchemaAST.ParseOptions): PlainCheck | undefined =>
  compile(ast, options)

/** A copy of input a plain check accepted: its objects and arrays new, its leaves as they are. */
export const copyPlain = (input: unknown): unknown => {
  if (typeof input !== "object" || input === null) return input
  // Array.from, not map: a hole becomes undefined, as the decode reads it.
  if (Array.isArray(input)) return Array.from(input, copyPlain)
  const out: Record<string, unknown> = {}
  for (const key of Object.keys(input)) out[key] = copyPlain((input as Record<string, unknown>)[key])
  return out
}
