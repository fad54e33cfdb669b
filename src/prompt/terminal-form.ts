/**
 * An MCP server's question on the terminal: a URL to visit is printed with a yes/no on whether
 * the person did; a form is asked field by field with the effect/cli prompt that fits the
 * field's type (a pick for offered values, a toggle for yes/no, a number, text), each field's
 * default offered. The person first says whether to answer at all (no: decline); Ctrl-C or
 * Escape cancels. An answer that still misses the form is refused by the caller (form.ts).
 */
import { Effect, type Terminal } from "effect"
import * as Prompt from "effect/cli/Prompt"
import { choicesOf, type FormOutcome, type FormRequest, itemChoicesOf } from "./form.ts"
import type { ElicitationForm } from "./input-round.ts"

type Field = Record<string, unknown>

const title = (key: string, field: Field) => {
  const name = typeof field.title === "string" ? field.title : key
  return typeof field.description === "string" ? `${name} (${field.description})` : name
}

const optionsOf = (values: ReadonlyArray<unknown>, field: Field) => {
  const titles = Array.isArray(field.oneOf) ? field.oneOf : []
  return values.map((value) => {
    const titled = titles.find((o) => typeof o === "object" && o !== null && (o as Field).const === value) as
      | Field
      | undefined
    return { title: typeof titled?.title === "string" ? titled.title : String(value), value }
  })
}

const askField = (key: string, field: Field): Prompt.Prompt<unknown> => {
  const message = title(key, field)
  const fallback = field.default
  if (field.type === "boolean")
    return Prompt.Toggle({ message, ...(typeof fallback === "boolean" ? { initial: fallback } : {}) })
  if (field.type === "integer" || field.type === "number") {
    const bounds = {
      ...(typeof field.minimum === "number" ? { min: field.minimum } : {}),
      ...(typeof field.maximum === "number" ? { max: field.maximum } : {}),
      ...(typeof fallback === "number" ? { default: fallback } : {})
    }
    return field.type === "integer" ? Prompt.Int({ message, ...bounds }) : Prompt.Number({ message, ...bounds })
  }
  if (field.type === "array") {
    const offered = itemChoicesOf(field) ?? []
    return Prompt.MultiSelect({ message, choices: optionsOf(offered, field) })
  }
  const offered = choicesOf(field)
  if (offered !== undefined) return Prompt.Select({ message, choices: optionsOf(offered, field) })
  return Prompt.String({ message, ...(typeof fallback === "string" ? { default: fallback } : {}) })
}

const askForm = Effect.fnUntraced(function* (form: ElicitationForm) {
  const content: Record<string, unknown> = {}
  for (const [key, field] of Object.entries(form.requestedSchema.properties)) {
    if (typeof field !== "object" || field === null) continue
    content[key] = yield* Prompt.run(askField(key, field as Field))
  }
  return content
})

export const terminalForm = (request: FormRequest): Effect.Effect<FormOutcome, never, Prompt.Environment> =>
  Effect.gen(function* (): Effect.fn.Return<FormOutcome, Terminal.QuitError, Prompt.Environment> {
    if (request.mode === "url") {
      const done = yield* Prompt.run(
        Prompt.Confirm({ message: `${request.message}\nOpen ${request.url} — done there?` })
      )
      return { _tag: "Answer", answer: { action: done ? "accept" : "decline" } }
    }
    const answer = yield* Prompt.run(Prompt.Confirm({ message: `${request.message}\nAnswer this?` }))
    if (!answer) return { _tag: "Answer", answer: { action: "decline" } }
    return { _tag: "Answer", answer: { action: "accept", content: yield* askForm(request) } }
  }).pipe(
    Effect.catchTag("QuitError", () => Effect.succeed<FormOutcome>({ _tag: "Answer", answer: { action: "cancel" } }))
  )
