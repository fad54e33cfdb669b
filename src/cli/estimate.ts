/**
 * What a tool declaration costs. No tokenizer ships with the library, so the estimate is the
 * common rule of thumb: ceil(characters of the declaration's compact JSON / 4). It is close for
 * English prose and JSON Schema with Anthropic's and OpenAI's tokenizers, and only an estimate.
 */
export const ESTIMATE_RULE = "estimated tokens = ceil(compact JSON characters of the declaration / 4)"

export const estimateTokens = (declaration: unknown): number =>
  Math.ceil((JSON.stringify(declaration) ?? "").length / 4)

const SUMMARY_MAX = 100

/**
 * The first sentence (or line) of a description, at most 100 characters, cut at a word.
 * A sentence ends at . ! or ? before a capital letter, so "e.g." does not end one.
 */
export const summarize = (description: string): string => {
  const firstLine = description.trim().split("\n")[0] ?? ""
  const sentence = /^(.+?[.!?])(?=\s+[A-Z]|$)/.exec(firstLine)?.[1] ?? firstLine
  if (sentence.length <= SUMMARY_MAX) return sentence
  const cut = sentence.slice(0, SUMMARY_MAX - 1)
  const space = cut.lastIndexOf(" ")
  return `${(space > SUMMARY_MAX / 2 ? cut.slice(0, space) : cut).replace(/[\s,;:(]+$/, "")}…`
}
