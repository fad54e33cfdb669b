/**
 * How tool_search ranks tools: by the query's words in the tool's name (most), then in its
 * description. `select:a,b` names tools exactly instead. Pure, so it is tested on its own.
 */
export interface Searchable {
  readonly id: string
  readonly description: string
}

const words = (text: string): Array<string> =>
  text
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((w) => w.length > 0)

/** A query of the form `select:name1,name2`, as its names; undefined for a ranked query. */
export const selectNames = (query: string): ReadonlyArray<string> | undefined => {
  const m = /^\s*select:(.*)$/is.exec(query)
  if (m === null) return undefined
  return m[1]!
    .split(",")
    .map((n) => n.trim())
    .filter((n) => n !== "")
}

const score = (terms: ReadonlyArray<string>, phrase: string, tool: Searchable): number => {
  const name = tool.id.toLowerCase()
  const nameWords = new Set(words(tool.id))
  const descWords = new Set(words(tool.description))
  const description = tool.description.toLowerCase()
  let total = name === phrase || name.endsWith(`__${phrase}`) ? 100 : 0
  for (const term of terms) {
    if (nameWords.has(term)) total += 10
    else if (name.includes(term)) total += 6
    if (descWords.has(term)) total += 3
    else if (term.length >= 3 && description.includes(term)) total += 1
  }
  return total
}

/** The tools matching a ranked query, best first (ties keep the given order), at most `limit`. */
export const rankTools = <T extends Searchable>(query: string, tools: ReadonlyArray<T>, limit: number): Array<T> => {
  const phrase = query.trim().toLowerCase()
  const terms = [...new Set(words(query))]
  if (terms.length === 0) return []
  return tools
    .map((tool, index) => ({ tool, index, score: score(terms, phrase, tool) }))
    .filter((s) => s.score > 0)
    .sort((a, b) => b.score - a.score || a.index - b.index)
    .slice(0, limit)
    .map((s) => s.tool)
}
