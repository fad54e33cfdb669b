/**
 * A Prompter for the MCP server: the questions become one MCP elicitation form (a pick, or
 * several, per question, and a text field for an answer of the person's own), sent to the
 * client when it declared the elicitation capability. A client without it: nobody to ask.
 * A call from a 2026-era client runs in an InputRound: the form goes back in its result
 * (`input_required`) instead, and the answer comes with the client's retry.
 */
import type { Server } from "@modelcontextprotocol/sdk/server/index.js"
import { Effect } from "effect"
import type { FormOutcome } from "./form.ts"
import { type ElicitationAnswer, type ElicitationForm, InputRound } from "./input-round.ts"
import type { Answer, Prompter, PromptOutcome, Question } from "./prompter.ts"

const pick = (i: number) => `q${i + 1}`
const own = (i: number) => `q${i + 1}_own`

/** The elicitation form for a question set. */
export const elicitationForm = (questions: ReadonlyArray<Question>): ElicitationForm["requestedSchema"] => ({
  type: "object" as const,
  properties: Object.fromEntries(
    questions.flatMap((q, i) => {
      const title = q.header ?? `Question ${i + 1}`
      const options = q.options.map((o) => ({
        const: o.label,
        title: o.description === undefined ? o.label : `${o.label} — ${o.description}`
      }))
      const choice =
        q.multiple === true
          ? { type: "array" as const, title, description: q.question, items: { anyOf: options } }
          : { type: "string" as const, title, description: q.question, oneOf: options }
      return [
        [pick(i), choice],
        [own(i), { type: "string" as const, title: `${title}: or type your own answer` }]
      ]
    })
  )
})

/**
 * Asks through the connected MCP server of the asking session: `server(sessionId)` (over stdio
 * there is one; over HTTP, one per MCP session).
 */
/**
 * What in an accepted answer does not fit its form, or undefined. The SDK 1.32 server checks a
 * 2025-era answer against the form before we see it; a 2026-era answer arrives with the retry
 * unchecked, so both eras are held to the same form here: only the form's fields, each of its
 * type, a pick among the offered options.
 */
const misfit = (questions: ReadonlyArray<Question>, content: Readonly<Record<string, unknown>>): string | undefined => {
  const fields = new Map(questions.flatMap((q, i) => [[pick(i), q] as const, [own(i), undefined] as const]))
  for (const [key, value] of Object.entries(content)) {
    if (!fields.has(key)) return `${key} is not a field of the form`
    const question = fields.get(key)
    if (question === undefined) {
      if (typeof value !== "string") return `${key} must be text`
      continue
    }
    const offered = new Set(question.options.map((o) => o.label))
    const picks = question.multiple === true ? value : [value]
    if (!Array.isArray(picks) || picks.some((p) => typeof p !== "string" || !offered.has(p)))
      return `${key} must be ${question.multiple === true ? "a list of" : "one of"} the offered options`
  }
  return undefined
}

const answersOf = (questions: ReadonlyArray<Question>, answer: ElicitationAnswer): PromptOutcome => {
  if (answer.action !== "accept") return { _tag: "Dismissed" }
  const content = answer.content ?? {}
  const problem = misfit(questions, content)
  if (problem !== undefined)
    return { _tag: "Unavailable", reason: `the client's answer does not fit the form: ${problem}` }
  const answers = questions.map((q, i): Answer => {
    const picked = content[pick(i)]
    const typed = content[own(i)]
    const selected = Array.isArray(picked) ? picked.map(String) : typeof picked === "string" ? [picked] : []
    return {
      question: q.question,
      selected,
      ...(typeof typed === "string" && typed.trim() !== "" ? { custom: typed.trim() } : {})
    }
  })
  return { _tag: "Answered", answers }
}

/**
 * Asks through the connected MCP server of the asking session: `server(sessionId)` (over stdio
 * there is one; over HTTP, one per MCP session); or, for a 2026-era call, through its round.
 */
export const mcpPrompter = (server: (sessionId: string | undefined) => Server | undefined): Prompter["Service"] => ({
  ask: (questions, sessionId) =>
    Effect.gen(function* (): Effect.fn.Return<PromptOutcome> {
      const message = questions.length === 1 ? questions[0]!.question : `${questions.length} questions from the agent`
      const form: ElicitationForm = { mode: "form", message, requestedSchema: elicitationForm(questions) }
      const round = yield* InputRound
      if (round !== undefined) {
        const got = yield* round.elicit(form)
        return got._tag === "Unavailable" ? got : answersOf(questions, got.answer)
      }
      const connected = server(sessionId)
      if (connected?.getClientCapabilities()?.elicitation === undefined) {
        return { _tag: "Unavailable", reason: "the MCP client does not support elicitation" }
      }
      const result = yield* Effect.tryPromise(() => connected.elicitInput(form as never)).pipe(Effect.option)
      if (result._tag === "None")
        return { _tag: "Unavailable", reason: "the MCP client did not answer the elicitation" }
      return answersOf(questions, result.value as ElicitationAnswer)
    }),
  // An upstream server's question, relayed as it came: the same two ways, by the client's era.
  elicit: (request, sessionId) =>
    Effect.gen(function* (): Effect.fn.Return<FormOutcome> {
      const round = yield* InputRound
      if (round !== undefined) return yield* round.elicit(request)
      const connected = server(sessionId)
      const capability = connected?.getClientCapabilities()?.elicitation as Record<string, unknown> | undefined
      if (capability === undefined)
        return { _tag: "Unavailable", reason: "the MCP client does not support elicitation" }
      if (!modesOf(capability).includes(request.mode))
        return { _tag: "Unavailable", reason: `the MCP client does not support ${request.mode}-mode elicitation` }
      const result = yield* Effect.tryPromise(() => connected!.elicitInput(request as never)).pipe(Effect.option)
      return result._tag === "None"
        ? { _tag: "Unavailable", reason: "the MCP client did not answer the elicitation" }
        : { _tag: "Answer", answer: result.value as ElicitationAnswer }
    }),
  canVisit: (sessionId) =>
    Effect.gen(function* () {
      const round = yield* InputRound
      if (round !== undefined) return round.canVisit === true
      const capability = server(sessionId)?.getClientCapabilities()?.elicitation as Record<string, unknown> | undefined
      return capability !== undefined && modesOf(capability).includes("url")
    })
})

/** The elicitation modes a client declared; an empty capability is form mode only (the 2025-06-18 shape). */
const modesOf = (capability: Record<string, unknown>) =>
  Object.keys(capability).length === 0 ? ["form"] : Object.keys(capability)
