/**
 * Adapting newString to the file after a fuzzy match. The model's oldString (F) and the file's
 * matched text (M) differ — indentation, trailing spaces, a stale line, a blank line — and
 * newString (N) was written against F. So:
 * - a line of N the model left as it was in F is written as the file has it (M's bytes);
 * - a blank line of F that the file lacks is dropped, and a blank line the file has between
 *   two kept lines is kept;
 * - a new or changed line is re-indented: F's indentation mapped onto the file's (tabs or
 *   spaces, the file's indent unit), and its quotes and dashes fitted to the file's (quotes.ts).
 */
import { align, pairUp } from "./diff.ts"
import { fitQuotes, learnStyle } from "./quotes.ts"
import { indentOf, isBlank } from "./text.ts"

const normalized = (s: string) => s.trim().replace(/\s+/g, " ")

/** The file's indent unit: a tab, or the most common step between indentation widths. */
export const detectIndentUnit = (text: string): string => {
  let tabs = 0
  let spaces = 0
  const steps = new Map<number, number>()
  let previous = 0
  for (const line of text.split("\n")) {
    if (isBlank(line)) continue
    const indent = indentOf(line)
    if (indent.startsWith("\t")) tabs++
    else if (indent.length > 0) spaces++
    if (!indent.includes("\t")) {
      const step = indent.length - previous
      // A one-space step is a comment continuation (" * "), not an indent level.
      if (step > 1) steps.set(step, (steps.get(step) ?? 0) + 1)
      previous = indent.length
    }
  }
  if (tabs > spaces) return "\t"
  let best = 2
  let count = 0
  for (const [step, n] of steps) if (n > count || (n === count && step < best)) [best, count] = [step, n]
  return " ".repeat(best)
}

/** The model's indent unit, read from what it sent (F and N). */
const modelUnit = (lines: ReadonlyArray<string>, fallback: string): string => {
  const indents = lines.filter((l) => !isBlank(l)).map(indentOf)
  if (indents.some((i) => i.startsWith("\t"))) return "\t"
  const widths = [...new Set(indents.map((i) => i.length))].sort((a, b) => a - b)
  let step = 0
  for (let k = 1; k < widths.length; k++) {
    const d = widths[k]! - widths[k - 1]!
    if (d > 1 && (step === 0 || d < step)) step = d
  }
  if (step === 0 && widths.length > 0 && widths[0]! > 1) {
    step = fallback === "\t" ? widths[0]! : Math.min(widths[0]!, fallback.length)
  }
  return step > 1 ? " ".repeat(step) : fallback
}

export interface AdaptInput {
  /** The file's text that was matched. */
  readonly matched: string
  /** oldString, as the matching rule read it. */
  readonly find: string
  /** newString, after the same transformation as oldString (unescaping, trimming). */
  readonly replacement: string
  /** The file's indent unit. */
  readonly unit: string
  /** False when the match starts inside a line: its first line keeps its (absent) indent. */
  readonly atLineStart: boolean
  /**
   * Whitespace the file has after the match to the end of its last line, included at the end
   * of `matched`. It stays with that line: on it when it is kept or changed, gone when it is
   * deleted — never carried onto a line newString adds after it.
   */
  readonly tail?: string
}

export const adaptReplacement = ({ matched, find, replacement, unit, atLineStart, tail = "" }: AdaptInput): string => {
  if (matched === find) return replacement
  const M = matched.split("\n")
  const F = find.split("\n")
  const N = replacement.split("\n")
  const fToM = pairUp(F, M, (a, b) => normalized(a) === normalized(b))
  const nToF: Array<number | undefined> = new Array(N.length).fill(undefined)
  for (const s of align(N, F)) if (s.op === "same") nToF[s.a] = s.b

  // Whether F's indentation is the file's already: then nothing is re-indented.
  let sameIndent = true
  fToM.forEach((m, f) => {
    if (m === undefined || isBlank(F[f]!) || isBlank(M[m]!) || ((f === 0 || m === 0) && !atLineStart)) return
    if (indentOf(F[f]!) !== indentOf(M[m]!)) sameIndent = false
  })
  const fUnit = modelUnit([...F, ...N], unit)
  const width = (u: string) => (u === "\t" ? 4 : u.length)
  const columns = (indent: string, u: string) => {
    let c = 0
    for (const ch of indent) c += ch === "\t" ? width(u) : 1
    return c
  }
  /** A line's indent moved from the model's frame (fRef) to the file's (mRef), level for level. */
  const reindent = (line: string, ref: { f: string; m: string } | undefined, first: boolean): string => {
    if (isBlank(line)) return ""
    if (sameIndent || ref === undefined || (first && !atLineStart)) return line
    const indent = indentOf(line)
    const body = line.slice(indent.length)
    const delta = columns(indent, fUnit) - columns(ref.f, fUnit)
    const levels = Math.trunc(delta / width(fUnit))
    const rest = delta - levels * width(fUnit)
    if (levels >= 0) return ref.m + unit.repeat(levels) + " ".repeat(Math.max(0, rest)) + body
    const mLevels = Math.floor(columns(ref.m, unit) / width(unit))
    return unit.repeat(Math.max(0, mLevels + levels)) + body
  }
  // The pair of lines whose indentation relation re-indents a line: the line it replaces, or
  // the nearest line above with a counterpart in the file.
  const refOf = (f: number | undefined): { f: string; m: string } | undefined => {
    if (f === undefined) return undefined
    const m = fToM[f]
    if (m === undefined || isBlank(F[f]!) || isBlank(M[m]!) || ((f === 0 || m === 0) && !atLineStart)) return undefined
    return { f: indentOf(F[f]!), m: indentOf(M[m]!) }
  }
  let ref: { f: string; m: string } | undefined
  for (let f = 0; f < F.length && ref === undefined; f++) ref = refOf(f)

  // Each line of N sits where a line of F sat: equal lines first, then changed ones by position.
  // A blank line never stands for a line with text (nor the reverse): pairing them by position
  // would place the blank where the text was, and the file's own blank line beside it.
  const nToFLoose = pairUp(N, F, (a, b) => a === b).map((f, k) =>
    f !== undefined && isBlank(N[k]!) !== isBlank(F[f]!) ? undefined : f
  )
  const style = learnStyle(fToM.flatMap((m, f) => (m === undefined ? [] : [[F[f]!, M[m]!] as const])))
  const out: Array<string> = []
  let lastM = -1
  /** out's length after the last line placed in the file. */
  let lastOut = 0
  /**
   * Blank lines the file has between two placed lines, and oldString did not, stay where they
   * are — also when a line beside them was deleted: the model never saw them, so it did not
   * mean to remove them. Blank lines newString already has there stand for them: the file's
   * replace them rather than double them.
   */
  const mapped = new Set(fToM.filter((m) => m !== undefined))
  const keepFileBlanks = (from: number, to: number) => {
    const blanks = M.slice(from + 1, to).filter((l, i) => isBlank(l) && !mapped.has(from + 1 + i))
    if (blanks.length === 0) return
    while (out.length > lastOut && isBlank(out[out.length - 1]!)) out.pop()
    out.push(...blanks)
  }
  N.forEach((line, k) => {
    const f = nToFLoose[k]
    const kept = f !== undefined && nToF[k] === f
    const m = f === undefined ? undefined : fToM[f]
    if (kept && m === undefined && isBlank(F[f]!)) return // a blank line the file does not have
    ref = refOf(f) ?? ref
    const fitted = fitQuotes(line, f === undefined ? undefined : F[f], m === undefined ? undefined : M[m], style)
    const changedLast = !kept && m !== undefined && f === F.length - 1
    const written = kept && m !== undefined ? M[m]! : reindent(fitted, ref, k === 0) + (changedLast ? tail : "")
    if (m !== undefined) {
      keepFileBlanks(lastM, m)
      lastM = m
    }
    out.push(written)
    if (m !== undefined) lastOut = out.length
  })
  // After the last placed line, the file's blank lines before a deleted line stay too, unless
  // newString's own lines there already have one.
  if (!out.slice(lastOut).some(isBlank)) keepFileBlanks(lastM, M.length)
  return out.join("\n")
}
