/**
 * `launches` for words as the analysis has them: a program in the launch table whose arguments
 * are only known when it runs, or a glob that could expand to an option, may launch anything.
 */
import type { Word } from "./analysis.ts"
import { hasLaunchSpec, type Launch, launches } from "./launches.ts"

export const launchOf = (words: ReadonlyArray<Word>): Launch | undefined => {
  const head = words[0]
  if (head === undefined || head.shape !== "literal" || !hasLaunchSpec(head.value)) return undefined
  const unknown = words
    .slice(1)
    .find((w) => w.shape === "dynamic" || (w.shape === "pattern" && /^[-*?[{]/.test(w.value)))
  if (unknown !== undefined) return { runs: `${head.value} with an argument only known when it runs (${unknown.text})` }
  return launches(words.map((w) => w.value))
}
