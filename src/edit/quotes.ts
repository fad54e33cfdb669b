/**
 * Quotes and dashes fitted to the file, character by character. Matching reads `" “ ”`, `' ‘ ’`
 * and `- – —` alike, so oldString may quote the file in another style than the file's; then
 * newString carries the model's style too. Where newString keeps a character of oldString, the
 * file's own character is written (a string literal's straight delimiters stay straight, curly
 * quotes inside the text stay curly); a quote newString adds takes the style the file uses for
 * what the model wrote, when the match says so unambiguously, and stays as sent otherwise.
 * A quote the new line writes differently from the old line it replaces (`“` removed, `"`
 * added) is a change the model made on purpose: it stays as sent, and so does every other
 * quote of that kind in the line — fitting never undoes what the edit itself changes.
 */
import { align } from "./diff.ts"

const FOLD: Readonly<Record<string, string>> = { "“": '"', "”": '"', "‘": "'", "’": "'", "–": "-", "—": "-" }
const fold = (c: string) => FOLD[c] ?? c
const isStyled = (c: string) => c === '"' || c === "'" || c === "-" || c in FOLD

/** Lines longer than this are not aligned character by character (the cost is quadratic). */
const MAX_CHARS = 2_000

/** What the model writes for each character of the file it quoted: its pairs, by the model's character. */
export type QuoteStyle = Map<string, Set<string>>

/** Learns, from the lines the match paired, which file character each styled model character stood for. */
export const learnStyle = (pairs: ReadonlyArray<readonly [string, string]>): QuoteStyle => {
  const style: QuoteStyle = new Map()
  for (const [model, file] of pairs) {
    if (model.length > MAX_CHARS || file.length > MAX_CHARS) continue
    const a = [...model]
    const b = [...file]
    for (const s of align(a, b, (x, y) => fold(x) === fold(y))) {
      if (s.op !== "same" || !isStyled(a[s.a]!)) continue
      const set = style.get(a[s.a]!) ?? new Set<string>()
      set.add(b[s.b]!)
      style.set(a[s.a]!, set)
    }
  }
  return style
}

/** True when the match paired some model character with a different file character. */
export const styleDiffers = (style: QuoteStyle): boolean =>
  [...style].some(([model, files]) => [...files].some((f) => f !== model))

/** A straight quote as typographic text writes it where the file always did so: opening or closing by context. */
const typographic = (straight: string, before: string | undefined, files: Set<string>): string | undefined => {
  const open = straight === '"' ? "“" : "‘"
  const close = straight === '"' ? "”" : "’"
  if (![...files].every((f) => f === open || f === close)) return undefined
  return before === undefined || /[\s([{—-]/.test(before) ? open : close
}

/**
 * `line` (a line of newString) with its styled characters fitted: those aligned with `model`
 * (the oldString line it replaces) take the character of `file` (the file's line) at that
 * place; the others follow `style` where every occurrence mapped to one file style.
 */
export const fitQuotes = (
  line: string,
  model: string | undefined,
  file: string | undefined,
  style: QuoteStyle
): string => {
  if (!styleDiffers(style) || line.length > MAX_CHARS) return line
  const n = [...line]
  const out = [...n]
  const fixed = new Set<number>()
  /** Styles the model changed on purpose in this line: it wrote `“` where it replaces and `"` here. */
  const changed = new Set<string>()
  if (model !== undefined && file !== undefined && model.length <= MAX_CHARS && file.length <= MAX_CHARS) {
    const f = [...model]
    const m = [...file]
    const fToM = new Map<number, number>()
    for (const s of align(f, m, (x, y) => fold(x) === fold(y))) if (s.op === "same") fToM.set(s.a, s.b)
    for (const s of align(n, f, (x, y) => fold(x) === fold(y))) {
      if (s.op !== "same" || !isStyled(n[s.a]!)) continue
      // The patch's old and new text disagree on this quote: the change is the point, keep it.
      if (n[s.a] !== f[s.b]) {
        fixed.add(s.a)
        changed.add(fold(n[s.a]!))
        continue
      }
      const at = fToM.get(s.b)
      if (at === undefined) continue
      out[s.a] = m[at]!
      fixed.add(s.a)
    }
  }
  n.forEach((c, i) => {
    if (fixed.has(i) || !isStyled(c) || changed.has(fold(c))) return
    const files = style.get(c)
    if (files === undefined) return
    if (c === '"' || c === "'") out[i] = typographic(c, n[i - 1], files) ?? (files.size === 1 ? [...files][0]! : c)
    // A hyphen inside a word ("well-known") is no dash: only a spaced one follows the file.
    else if (c === "-") out[i] = n[i - 1] === " " && n[i + 1] === " " && files.size === 1 ? [...files][0]! : c
    else if (files.size === 1) out[i] = [...files][0]!
  })
  return out.join("")
}
