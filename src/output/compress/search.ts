/**
 * Search results: only identical lines collapse (into the first, with a count). A match is
 * never dropped while the budget lasts; past it the rest is one marker naming the stored line
 * range. Blank lines and `--` context separators are left alone (they carry structure). It is a
 * streaming pass (pass.ts): it remembers only the lines it shows.
 */
import { type Line, type LineSink, makePass, type PassOptions } from "./pass.ts"

const keyOf = (line: Line) => line.text.replace(/\r?\n$/, "")

export const searchPass = (options: PassOptions): LineSink => {
  /** Lines shown so far, by text: a later identical one folds into its count. */
  const seen = new Map<string, Line>()
  return makePass(
    {
      // No tail: search results have no summary at the end, and a ring would hold lines the
      // count of a later duplicate could not reach once they are left out.
      tailLines: 0,
      admit: (line) => {
        line.keep = true
        const key = keyOf(line)
        if (key.trim() === "" || key === "--") return true
        const first = seen.get(key)
        if (first !== undefined) {
          first.repeats++
          return false
        }
        seen.set(key, line)
        return true
      },
      omitted: (line) => {
        const key = keyOf(line)
        if (seen.get(key) === line) seen.delete(key)
      }
    },
    options
  )
}
