/**
 * What a tool declaration costs in the prompt: its characters and its tokens. Tokens are counted
 * with gpt-tokenizer's o200k_base encoding (OpenAI's GPT-4o/4.1/5 family) through effect's
 * `effect/ai` Tokenizer, so an embedder can provide its own model's tokenizer instead. Claude's
 * and Gemini's tokenizers are not public; for JSON Schema and English prose their counts are
 * within roughly 10–20% of o200k_base's.
 */
import { Effect, Layer } from "effect"
import type * as Prompt from "effect/ai/Prompt"
import * as Tokenizer from "effect/ai/Tokenizer"
import { encodeO200k } from "../surface/tokens.ts"
import { headOf } from "../text/cut.ts"

export const TOKEN_RULE =
  "tokens = o200k_base tokens (gpt-tokenizer) of the declaration's compact JSON; chars = its length"

/** The text of every part of a prompt, in order: what a declaration's JSON is, as a prompt. */
const textOf = (prompt: Prompt.Prompt): string =>
  prompt.content
    .flatMap((message) =>
      typeof message.content === "string"
        ? [message.content]
        : message.content.flatMap((part) => (part.type === "text" || part.type === "reasoning" ? [part.text] : []))
    )
    .join("\n")

/** A Tokenizer counting o200k_base tokens of a prompt's text (no per-message framing). */
export const o200kTokenizer: Tokenizer.Service = Tokenizer.make({
  tokenize: (prompt) => Effect.sync(() => encodeO200k(textOf(prompt)))
})

export const o200kLayer = Layer.succeed(Tokenizer.Tokenizer, o200kTokenizer)

export interface DeclarationSize {
  readonly chars: number
  readonly tokens: number
}

/** The size of one declaration as it is sent: compact JSON. */
export const declarationSize = Effect.fnUntraced(function* (
  declaration: unknown
): Effect.fn.Return<DeclarationSize, never, Tokenizer.Tokenizer> {
  const text = JSON.stringify(declaration) ?? ""
  const tokenizer = yield* Tokenizer.Tokenizer
  const tokens = yield* tokenizer.tokenize(text).pipe(Effect.orDie)
  return { chars: text.length, tokens: tokens.length }
})

/** The same, synchronously with o200k_base (benches, tests, auto-deferral). */
export { countTokens } from "../surface/tokens.ts"

const SUMMARY_MAX = 100

/**
 * The first sentence (or line) of a description, at most 100 characters, cut at a word.
 * A sentence ends at . ! or ? before a capital letter, so "e.g." does not end one.
 */
export const summarize = (description: string): string => {
  const firstLine = description.trim().split("\n")[0] ?? ""
  const sentence = /^(.+?[.!?])(?=\s+[A-Z]|$)/.exec(firstLine)?.[1] ?? firstLine
  if (sentence.length <= SUMMARY_MAX) return sentence
  const cut = headOf(sentence, SUMMARY_MAX - 1)
  const space = cut.lastIndexOf(" ")
  return `${(space > SUMMARY_MAX / 2 ? cut.slice(0, space) : cut).replace(/[\s,;:(]+$/, "")}…`
}
