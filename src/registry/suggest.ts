/** "Did you mean …" for a tool name the model got wrong. */
import { distance } from "fastest-levenshtein"
import { UnknownTool } from "../tool/errors.ts"

const normalize = (name: string) => name.toLowerCase().replace(/[-_\s]/g, "")

/** Up to `max` registered names close to `name`, closest first. */
export const closestNames = (name: string, candidates: ReadonlyArray<string>, max = 3): Array<string> => {
  const wanted = normalize(name)
  return candidates
    .map((candidate) => {
      const c = normalize(candidate)
      const contains = wanted.length >= 3 && (c.includes(wanted) || wanted.includes(c))
      return { candidate, score: contains ? 0.5 : distance(wanted, c) }
    })
    .filter(({ score, candidate }) => score <= Math.max(2, Math.floor(Math.max(wanted.length, candidate.length) / 3)))
    .sort((a, b) => a.score - b.score || a.candidate.localeCompare(b.candidate))
    .slice(0, max)
    .map(({ candidate }) => candidate)
}

/** The error for a name no tool has: the closest names, or else every name. */
export const unknownTool = (name: string, names: ReadonlyArray<string>): UnknownTool => {
  const suggestions = closestNames(name, names)
  const hint =
    suggestions.length > 0
      ? ` Did you mean ${suggestions.map((s) => `"${s}"`).join(" or ")}?`
      : ` Available tools: ${names.join(", ")}.`
  return new UnknownTool({ name, suggestions, message: `No tool named "${name}".${hint}` })
}
