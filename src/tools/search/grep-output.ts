/**
 * What grep prints in each output mode, from a backend's result: matching lines (with their
 * context, rg's way: `path:N:text` for a match, `path-N-text` around it, `--` between groups),
 * the files with matches, or the count per file.
 */
import type { GrepMatch } from "./backend.ts"

export type OutputMode = "content" | "files_with_matches" | "count"

/** The page's matches as lines; with context, each file's lines once, in order, groups apart. */
export const contentLines = (
  matches: ReadonlyArray<GrepMatch>,
  display: (abs: string) => string,
  withContext: boolean
): Array<string> => {
  if (!withContext) return matches.map((m) => `${display(m.path)}:${m.line}:${m.text}`)
  const out: Array<string> = []
  let i = 0
  while (i < matches.length) {
    const path = matches[i]!.path
    const shown = display(path)
    // line -> [text, is a match]; a match wins over the same line as another's context.
    const lines = new Map<number, readonly [string, boolean]>()
    for (; i < matches.length && matches[i]!.path === path; i++) {
      const m = matches[i]!
      for (const c of m.before ?? []) if (!lines.has(c.line)) lines.set(c.line, [c.text, false])
      lines.set(m.line, [m.text, true])
      for (const c of m.after ?? []) if (!lines.has(c.line)) lines.set(c.line, [c.text, false])
    }
    let previous: number | undefined
    for (const n of [...lines.keys()].sort((a, b) => a - b)) {
      if (out.length > 0 && (previous === undefined || n > previous + 1)) out.push("--")
      const [text, isMatch] = lines.get(n)!
      out.push(`${shown}${isMatch ? ":" : "-"}${n}${isMatch ? ":" : "-"}${text}`)
      previous = n
    }
  }
  return out
}

/** Files with matches, sorted by path, each with its count; hidden ones left out. */
export const fileEntries = (
  counts: ReadonlyMap<string, number>,
  hidden: (abs: string) => boolean
): Array<readonly [string, number]> =>
  [...counts].filter(([path]) => !hidden(path)).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
