/**
 * An elicitation form's answer held to the form: an MCP server we connect to may ask the person
 * through its client (an elicitation form, or a URL to visit), and whatever host relays the
 * question — a terminal, our own MCP client's elicitation, a 2026 client's `input_required`
 * round — the answer that goes back is checked here first. Defaults the person left alone are
 * filled in (SEP-1034), then only the form's fields, each of its type, within its bounds, and
 * every required one present, pass.
 */
import type { ElicitationAnswer, ElicitationForm, UrlRequest } from "./input-round.ts"

export type { UrlRequest }

/** What a host can be asked to show the person. */
export type FormRequest = ElicitationForm | UrlRequest

/** What came of it: the person's answer, or nobody could be asked (and why). */
export type FormOutcome =
  | { readonly _tag: "Answer"; readonly answer: ElicitationAnswer }
  | { readonly _tag: "Unavailable"; readonly reason: string }

type Field = Record<string, unknown>

// prompt/ is a leaf: the one-line check is its own, not schema/'s.
const isRecord = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)

const fieldsOf = (form: ElicitationForm): Record<string, Field> =>
  Object.fromEntries(
    Object.entries(form.requestedSchema.properties).filter((e): e is [string, Field] => isRecord(e[1]))
  )

const requiredOf = (form: ElicitationForm): ReadonlyArray<string> => {
  const required = (form.requestedSchema as { required?: unknown }).required
  return Array.isArray(required) ? required.filter((r): r is string => typeof r === "string") : []
}

/** The values a single-choice field offers (`enum`, or `oneOf` consts), when it offers some. */
export const choicesOf = (field: Field): ReadonlyArray<unknown> | undefined => {
  if (Array.isArray(field.enum)) return field.enum
  if (Array.isArray(field.oneOf)) return field.oneOf.flatMap((o) => (isRecord(o) && "const" in o ? [o.const] : []))
  return undefined
}

/** The values a multi-choice (array) field offers. */
export const itemChoicesOf = (field: Field): ReadonlyArray<unknown> | undefined => {
  const items = field.items
  if (!isRecord(items)) return undefined
  if (Array.isArray(items.enum)) return items.enum
  const options = Array.isArray(items.anyOf) ? items.anyOf : Array.isArray(items.oneOf) ? items.oneOf : undefined
  return options?.flatMap((o) => (isRecord(o) && "const" in o ? [o.const] : []))
}

/** The answer's content with each field the person left out set to the form's default, if it has one. */
export const withDefaults = (form: ElicitationForm, content: Readonly<Record<string, unknown>>) => {
  const filled: Record<string, unknown> = { ...content }
  for (const [key, field] of Object.entries(fieldsOf(form))) {
    if (!(key in filled) && "default" in field) filled[key] = field.default
  }
  return filled
}

const FORMATS: Record<string, (s: string) => boolean> = {
  email: (s) => /^[^\s@]+@[^\s@]+$/.test(s),
  uri: (s) => URL.canParse(s),
  date: (s) => /^\d{4}-\d{2}-\d{2}$/.test(s) && !Number.isNaN(Date.parse(s)),
  "date-time": (s) => /^\d{4}-\d{2}-\d{2}T/.test(s) && !Number.isNaN(Date.parse(s))
}

const fieldProblem = (key: string, field: Field, value: unknown): string | undefined => {
  const type = field.type
  if (type === "boolean") return typeof value === "boolean" ? undefined : `${key} must be true or false`
  if (type === "number" || type === "integer") {
    if (typeof value !== "number" || !Number.isFinite(value)) return `${key} must be a number`
    if (type === "integer" && !Number.isInteger(value)) return `${key} must be a whole number`
    if (typeof field.minimum === "number" && value < field.minimum) return `${key} must be at least ${field.minimum}`
    if (typeof field.maximum === "number" && value > field.maximum) return `${key} must be at most ${field.maximum}`
    return undefined
  }
  if (type === "array") {
    if (!Array.isArray(value)) return `${key} must be a list`
    const offered = itemChoicesOf(field)
    if (offered !== undefined && value.some((v) => !offered.includes(v)))
      return `${key} must be a list of the offered options`
    if (typeof field.minItems === "number" && value.length < field.minItems)
      return `${key} needs at least ${field.minItems} picks`
    if (typeof field.maxItems === "number" && value.length > field.maxItems)
      return `${key} allows at most ${field.maxItems} picks`
    return undefined
  }
  // A string, the one type left the spec allows in a form.
  if (typeof value !== "string") return `${key} must be text`
  const offered = choicesOf(field)
  if (offered !== undefined && !offered.includes(value)) return `${key} must be one of the offered options`
  if (typeof field.minLength === "number" && value.length < field.minLength)
    return `${key} must be at least ${field.minLength} characters`
  if (typeof field.maxLength === "number" && value.length > field.maxLength)
    return `${key} must be at most ${field.maxLength} characters`
  const format = typeof field.format === "string" ? FORMATS[field.format] : undefined
  if (format !== undefined && !format(value)) return `${key} must be a valid ${String(field.format)}`
  return undefined
}

/** What in an accepted content does not fit the form, or undefined. */
export const formMisfit = (form: ElicitationForm, content: Readonly<Record<string, unknown>>): string | undefined => {
  const fields = fieldsOf(form)
  for (const [key, value] of Object.entries(content)) {
    const field = fields[key]
    if (field === undefined) return `${key} is not a field of the form`
    const problem = fieldProblem(key, field, value)
    if (problem !== undefined) return problem
  }
  const missing = requiredOf(form).find((key) => !(key in content))
  return missing === undefined ? undefined : `${missing} is required`
}

/**
 * The answer to send back: an accepted one with its defaults filled in and checked (Unavailable
 * with the reason when it does not fit); a decline or a cancel as it is.
 */
export const heldToForm = (request: FormRequest, answer: ElicitationAnswer): FormOutcome => {
  if (answer.action !== "accept") return { _tag: "Answer", answer: { action: answer.action } }
  if (request.mode === "url") return { _tag: "Answer", answer: { action: "accept" } }
  const content = withDefaults(request, answer.content ?? {})
  const problem = formMisfit(request, content)
  return problem === undefined
    ? { _tag: "Answer", answer: { action: "accept", content } }
    : { _tag: "Unavailable", reason: `the answer does not fit the form: ${problem}` }
}
