/**
 * Arguments checked against the server's own schema before the call, so a bad call costs no
 * round trip and the model hears every failing path at once (the same shape as a built-in
 * tool's InvalidArguments). ajv, non-strict (servers write schemas with unknown keywords and
 * formats); Ajv2020 when the schema declares 2020-12.
 */
import type { Ajv, ErrorObject, ValidateFunction } from "ajv"
import type { Ajv2020 } from "ajv/dist/2020.js"
import { Result } from "effect"
import { lazyRequire } from "../load/lazy.ts"
import { isRecord } from "../schema/json-schema.ts"
import type { Dialect } from "../schema/resolve.ts"
import { clip } from "../text/cut.ts"
import type { ArgumentIssue, InvalidArguments } from "../tool/errors.ts"
import { invalidArguments } from "../tool/tool.ts"

// ajv is ~90 modules; it loads when the first MCP server's tool is converted, not with the package.
const ajvDraft07 = lazyRequire<typeof import("ajv")>("ajv")
const ajvDraft2020 = lazyRequire<typeof import("ajv/dist/2020.js")>("ajv/dist/2020.js")

const options = { strict: false, allErrors: true, logger: false, validateFormats: false } as const
const fresh = (dialect: Dialect): Ajv | Ajv2020 =>
  dialect === "2020-12" ? new (ajvDraft2020().Ajv2020)(options) : new (ajvDraft07().Ajv)(options)
let draft07: Ajv | Ajv2020 | undefined
let draft2020: Ajv | Ajv2020 | undefined
const ajvFor = (dialect: Dialect): Ajv | Ajv2020 => {
  if (dialect === "2020-12") {
    draft2020 ??= fresh(dialect)
    return draft2020
  }
  draft07 ??= fresh(dialect)
  return draft07
}

const pointerToPath = (pointer: string): Array<string | number> =>
  pointer === ""
    ? []
    : pointer
        .slice(1)
        .split("/")
        .map((t) => t.replace(/~1/g, "/").replace(/~0/g, "~"))
        .map((t) => (/^\d+$/.test(t) ? Number(t) : t))

const render = (path: ReadonlyArray<string | number>): string =>
  path.length === 0
    ? "(arguments)"
    : path.map((k, i) => (typeof k === "number" ? `[${k}]` : i === 0 ? k : `.${k}`)).join("")

const valueAt = (input: unknown, path: ReadonlyArray<string | number>): unknown => {
  let at: unknown = input
  for (const key of path) {
    if (typeof at !== "object" || at === null) return undefined
    at = (at as Record<string | number, unknown>)[key]
  }
  return at
}

const describe = (value: unknown): string => {
  if (value === undefined) return "nothing"
  const text = JSON.stringify(value) ?? String(value)
  return clip(text, 80, "...")
}

const issueOf = (error: ErrorObject, input: unknown): ArgumentIssue => {
  const path = pointerToPath(error.instancePath)
  const params = error.params as Record<string, unknown>
  if (error.keyword === "required")
    return { path: render([...path, String(params.missingProperty)]), message: "Missing key" }
  if (error.keyword === "additionalProperties") {
    return { path: render([...path, String(params.additionalProperty)]), message: "Unexpected key" }
  }
  const allowed =
    error.keyword === "enum" && Array.isArray(params.allowedValues) ? ` ${describe(params.allowedValues)}` : ""
  return {
    path: render(path),
    message: `${error.message ?? "is invalid"}${allowed}, got ${describe(valueAt(input, path))}`
  }
}

export type Validator = (input: unknown) => Result.Result<unknown, InvalidArguments>

/**
 * Compiles the server's schema; throws when ajv cannot (the caller then drops that one tool).
 * `$schema` is read to choose the validator and removed, so an unusual meta-schema URI does
 * not make ajv refuse an otherwise ordinary schema.
 */
export const compileValidator = (tool: string, schema: unknown, dialect: Dialect): Validator => {
  if (!isRecord(schema)) throw new Error("the schema is not an object")
  const { $schema: _meta, $id: _id, ...plain } = schema
  let validate: ValidateFunction
  try {
    validate = ajvFor(dialect).compile(plain)
  } catch {
    // A nested $id another tool's schema already used: compile this one on its own.
    validate = fresh(dialect).compile(plain)
  }
  return (input) => {
    if (validate(input)) return Result.succeed(input)
    const seen = new Set<string>()
    const issues: Array<ArgumentIssue> = []
    for (const error of validate.errors ?? []) {
      const issue = issueOf(error, input)
      const key = `${issue.path}\0${issue.message}`
      if (seen.has(key)) continue
      seen.add(key)
      issues.push(issue)
    }
    return Result.fail(invalidArguments(tool, issues))
  }
}
