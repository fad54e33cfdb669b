/**
 * The nine replacers of the edit cascade, in the spec's order. Each returns every place in the
 * file its rule matches, as character spans of the (LF, BOM-less) text; the cascade decides
 * what one, several or none mean. Spans, not strings: a looser rule's match is never looked up
 * again with indexOf, which would find the first look-alike instead of the place that matched.
 */
import { distance } from "fastest-levenshtein"
import { CLEARLY_CLOSER, closestElsewhere, type Region } from "./anchor-check.ts"
import { pairUp } from "./diff.ts"
import { Lines, type Span } from "./lines.ts"
import { isBlank } from "./text.ts"

export { Lines, type Span }

export type ReplacerName =
  | "simple"
  | "lineTrimmed"
  | "blockAnchor"
  | "whitespaceNormalized"
  | "indentationFlexible"
  | "escapedNormalized"
  | "trimmedBoundary"
  | "contextAware"
  | "multiOccurrence"

export interface Found {
  readonly spans: ReadonlyArray<Span>
  /** The oldString as this rule read it (unescaped, trimmed), for adapting newString. */
  readonly find: string
  /** The same change applied to newString. */
  readonly adaptNew?: (newString: string) => string
  /** Set when the rule itself saw several look-alike places and refused to pick one. */
  readonly ambiguous?: boolean
  /**
   * Set when the anchors matched one block but its middle is not clearly that block's: the
   * candidate and the region the middle is as close to, for the refusal to show.
   */
  readonly unclear?: ReadonlyArray<Region>
}

/**
 * The anchored candidate [first, last], its middle scoring `score`, accepted only when no other
 * stretch of the file is about as close to the whole of oldString (anchor-check.ts); else a
 * refusal. A middle equal to the candidate's is accepted as it is: everything matches there.
 */
const distinctOrRefused = (
  text: Lines,
  lines: ReadonlyArray<string>,
  candidate: { first: number; last: number; score: number; span: Span },
  find: string
): Found => {
  if (candidate.score === 1) return { spans: [candidate.span], find }
  const middle = lines.slice(1, -1).filter((l) => !isBlank(l)).length
  // The anchors are equal there: the whole block's similarity, to weigh against other places'.
  const score = (2 + candidate.score * middle) / (2 + middle)
  const other = closestElsewhere(text.trimmed, lines, candidate.first, candidate.last)
  if (other === undefined || other.score <= score - CLEARLY_CLOSER) return { spans: [candidate.span], find }
  return { spans: [candidate.span], find, unclear: [{ ...candidate, score }, other] }
}

export interface Replacer {
  readonly name: ReplacerName
  readonly find: (text: Lines, find: string) => Found | undefined
}

/** oldString as lines; a final newline is remembered, not kept as an empty last line. */
const findLines = (find: string): { lines: Array<string>; newline: boolean } => {
  const lines = find.split("\n")
  const newline = lines.length > 1 && lines[lines.length - 1] === ""
  if (newline) lines.pop()
  return { lines, newline }
}

const exactSpans = (text: string, find: string): Array<Span> => {
  const spans: Array<Span> = []
  if (find === "") return spans
  for (let i = text.indexOf(find); i >= 0; i = text.indexOf(find, i + find.length)) {
    spans.push({ start: i, end: i + find.length })
  }
  return spans
}

const found = (spans: Array<Span>, find: string, adaptNew?: (s: string) => string): Found | undefined =>
  spans.length === 0 ? undefined : adaptNew === undefined ? { spans, find } : { spans, find, adaptNew }

/** Windows of the file whose lines equal oldString's lines under `same`. */
const lineWindows = (text: Lines, find: string, same: (fileLine: number, findLine: number) => boolean) => {
  const { lines, newline } = findLines(find)
  const spans: Array<Span> = []
  if (lines.every(isBlank)) return spans
  for (let i = 0; i + lines.length <= text.lines.length; i++) {
    let ok = true
    for (let k = 0; k < lines.length && ok; k++) ok = same(i + k, k)
    if (ok) spans.push(text.span(i, i + lines.length - 1, newline))
  }
  return spans
}

export const simple: Replacer = {
  name: "simple",
  find: (text, find) => found(exactSpans(text.text, find), find)
}

export const lineTrimmed: Replacer = {
  name: "lineTrimmed",
  find: (text, find) => {
    const trimmed = findLines(find).lines.map((l) => l.trim())
    return found(
      lineWindows(text, find, (i, k) => text.trimmed[i] === trimmed[k]),
      find
    )
  }
}

/** 1 for equal lines, falling towards 0 as the edit distance grows (Levenshtein). */
export const lineSimilarity = (a: string, b: string): number => {
  const x = a.trim()
  const y = b.trim()
  const longest = Math.max(x.length, y.length)
  return longest === 0 ? 1 : 1 - distance(x, y) / longest
}

/** Below this mean similarity of the middle lines, an anchored block is not the one meant. */
export const BLOCK_ANCHOR_FLOOR = 0.7

const normalized = (s: string) => s.trim().replace(/\s+/g, " ")

/** Similarity of the middle lines of a block to those of oldString, lined up by a diff. */
const middleSimilarity = (fileMiddle: ReadonlyArray<string>, findMiddle: ReadonlyArray<string>): number => {
  // Blank lines say nothing about which block this is (and a missing one is a common slip).
  const fileLines = fileMiddle.filter((l) => !isBlank(l))
  const findLines = findMiddle.filter((l) => !isBlank(l))
  if (fileLines.length === 0 && findLines.length === 0) return 1
  const pairs = pairUp(findLines, fileLines, (a, b) => normalized(a) === normalized(b))
  let total = 0
  pairs.forEach((m, k) => {
    if (m !== undefined) total += lineSimilarity(findLines[k]!, fileLines[m]!)
  })
  return total / Math.max(fileLines.length, findLines.length)
}

/**
 * First and last lines as anchors, the middle scored by Levenshtein similarity. Unlike the
 * spec, one candidate is not accepted unconditionally: it must reach BLOCK_ANCHOR_FLOOR. When
 * several reach it, the rule refuses to choose (two near-identical blocks, DB_HOST beside
 * DB_HOST_OLD): a fuzzy match never edits one of two look-alikes.
 */
export const blockAnchor: Replacer = {
  name: "blockAnchor",
  find: (text, find) => {
    const { lines, newline } = findLines(find)
    if (lines.length < 3) return undefined
    const first = lines[0]!.trim()
    const last = lines[lines.length - 1]!.trim()
    if (first === "" || last === "") return undefined
    const slack = Math.max(1, Math.floor(lines.length / 10))
    const scored: Array<{ span: Span; score: number; first: number; last: number }> = []
    for (let i = 0; i < text.lines.length; i++) {
      if (text.trimmed[i] !== first) continue
      const lo = i + Math.max(2, lines.length - 1 - slack)
      const hi = Math.min(text.lines.length - 1, i + lines.length - 1 + slack)
      // Of the closing anchors in reach, the one whose middle is most alike (then the nearest to
      // oldString's length): a `}` one level in is not the block's end because it comes first.
      let best: { score: number; last: number } | undefined
      for (let j = lo; j <= hi; j++) {
        if (text.trimmed[j] !== last) continue
        const score = middleSimilarity(text.lines.slice(i + 1, j), lines.slice(1, -1))
        const off = Math.abs(j - i + 1 - lines.length)
        if (
          best === undefined ||
          score > best.score ||
          (score === best.score && off < Math.abs(best.last - i + 1 - lines.length))
        ) {
          best = { score, last: j }
        }
      }
      if (best !== undefined)
        scored.push({ span: text.span(i, best.last, newline), score: best.score, first: i, last: best.last })
    }
    const passing = scored.filter((c) => c.score >= BLOCK_ANCHOR_FLOOR)
    if (passing.length === 0) return undefined
    if (passing.length > 1) return { spans: passing.map((c) => c.span), find, ambiguous: true }
    return distinctOrRefused(text, lines, passing[0]!, find)
  }
}

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")
const isWordChar = (c: string) => /[A-Za-z0-9_$]/.test(c)

/** Straight and typographic quotes and dashes match each other. */
const charPattern = (c: string): string =>
  /["“”]/.test(c) ? '["“”]' : /['‘’]/.test(c) ? "['‘’]" : /[-–—]/.test(c) ? "[-–—]" : escapeRegExp(c)

/**
 * Runs of whitespace in oldString match any run of whitespace (line breaks too), and
 * whitespace may appear or vanish next to punctuation (`f(a,b)` finds `f(a, b)`). Words
 * themselves must match exactly.
 */
export const whitespaceNormalized: Replacer = {
  name: "whitespaceNormalized",
  find: (text, find) => {
    const core = find.trim()
    if (core === "") return undefined
    let pattern = ""
    for (let i = 0; i < core.length; i++) {
      const c = core[i]!
      if (/\s/.test(c)) {
        const before = core[i - 1]!
        while (i + 1 < core.length && /\s/.test(core[i + 1]!)) i++
        // Whitespace between two words must stay whitespace; next to punctuation it may vanish.
        const after = core[i + 1]!
        pattern += isWordChar(before) && isWordChar(after) ? "\\s+" : "\\s*"
        continue
      }
      const prev = core[i - 1]
      if (prev !== undefined && !/\s/.test(prev) && (!isWordChar(prev) || !isWordChar(c))) pattern += "[ \\t]*"
      pattern += charPattern(c)
    }
    // A loose match never starts or ends inside a word: "tokeniz" must not find "tokenize".
    if (isWordChar(core[0]!)) pattern = `(?<![A-Za-z0-9_$])${pattern}`
    if (isWordChar(core[core.length - 1]!)) pattern = `${pattern}(?![A-Za-z0-9_$])`
    const re = new RegExp(pattern, "g")
    const spans: Array<Span> = []
    const leading = /^\s/.test(find)
    const trailingNewline = find.endsWith("\n")
    for (let m = re.exec(text.text); m !== null; m = re.exec(text.text)) {
      let start = m.index
      let end = start + m[0].length
      // Widen to whole lines when oldString started or ended with whitespace.
      if (leading) {
        const lineStart = text.text.lastIndexOf("\n", start - 1) + 1
        if (/^[ \t]*$/.test(text.text.slice(lineStart, start))) start = lineStart
      }
      if (trailingNewline) {
        const nl = text.text.indexOf("\n", end)
        if (nl >= 0 && /^[ \t]*$/.test(text.text.slice(end, nl))) end = nl + 1
      }
      spans.push({ start, end })
    }
    return found(spans, find)
  }
}

const minIndent = (lines: ReadonlyArray<string>): number => {
  let min = Number.POSITIVE_INFINITY
  for (const l of lines) if (!isBlank(l)) min = Math.min(min, /^[ \t]*/.exec(l)![0].length)
  return Number.isFinite(min) ? min : 0
}

const dedent = (lines: ReadonlyArray<string>): Array<string> => {
  const n = minIndent(lines)
  return lines.map((l) => (isBlank(l) ? "" : l.slice(n)))
}

/** The block at any indentation, relative indentation kept. */
export const indentationFlexible: Replacer = {
  name: "indentationFlexible",
  find: (text, find) => {
    const { lines, newline } = findLines(find)
    const want = dedent(lines).join("\n")
    const spans: Array<Span> = []
    if (lines.every(isBlank)) return undefined
    for (let i = 0; i + lines.length <= text.lines.length; i++) {
      if (text.trimmed[i] !== lines[0]!.trim()) continue
      if (dedent(text.lines.slice(i, i + lines.length)).join("\n") === want) {
        spans.push(text.span(i, i + lines.length - 1, newline))
      }
    }
    return found(spans, find)
  }
}

/** Undoes one level of string escaping: `\n`, `\t`, `\"`, `\'`, `` \` ``, `\$`, `\\`. */
export const unescapeOnce = (s: string): string =>
  s.replace(/\\(n|t|r|"|'|`|\$|\\)/g, (_, c: string) => (c === "n" ? "\n" : c === "t" ? "\t" : c === "r" ? "\r" : c))

/** oldString that arrived with an extra level of escaping (literal `\n`, `\"`). */
export const escapedNormalized: Replacer = {
  name: "escapedNormalized",
  find: (text, find) => {
    const plain = unescapeOnce(find).replace(/\r\n/g, "\n")
    if (plain === find) return undefined
    const adapt = (s: string) => unescapeOnce(s).replace(/\r\n/g, "\n")
    const exact = exactSpans(text.text, plain).filter((span) => wholeWords(text.text, span))
    if (exact.length > 0) return { spans: exact, find: plain, adaptNew: adapt }
    const trimmed = lineTrimmed.find(text, plain)
    return trimmed === undefined ? undefined : { ...trimmed, find: plain, adaptNew: adapt }
  }
}

/** oldString with blank lines (or spaces) around it that the file does not have there. */
export const trimmedBoundary: Replacer = {
  name: "trimmedBoundary",
  find: (text, find) => {
    const core = find.trim()
    if (core === find || core === "") return undefined
    const lead = find.slice(0, find.indexOf(core))
    const trail = find.slice(lead.length + core.length)
    const adapt = (s: string) => {
      let out = s
      if (out.startsWith(lead)) out = out.slice(lead.length)
      else out = out.replace(/^(\s*\n)+/, "")
      if (out.endsWith(trail)) out = out.slice(0, out.length - trail.length)
      else out = out.replace(/(\n\s*)+$/, "")
      return out
    }
    const exact = exactSpans(text.text, core).filter((span) => wholeWords(text.text, span))
    if (exact.length > 0) return { spans: exact, find: core, adaptNew: adapt }
    const trimmed = lineTrimmed.find(text, core)
    return trimmed === undefined ? undefined : { ...trimmed, find: core, adaptNew: adapt }
  }
}

/** The span neither starts nor ends inside a word. */
const wholeWords = (text: string, span: Span): boolean => {
  const at = (i: number) => (i >= 0 && i < text.length ? text[i]! : " ")
  const startOk = !isWordChar(at(span.start)) || !isWordChar(at(span.start - 1))
  const endOk = !isWordChar(at(span.end - 1)) || !isWordChar(at(span.end))
  return startOk && endOk
}

/**
 * First and last lines as anchors with the same number of lines between, and at least half of
 * the middle lines equal (ignoring indentation).
 */
export const contextAware: Replacer = {
  name: "contextAware",
  find: (text, find) => {
    const { lines, newline } = findLines(find)
    if (lines.length < 3) return undefined
    const trimmed = lines.map((l) => l.trim())
    const candidates: Array<{ first: number; last: number; score: number; span: Span }> = []
    for (let i = 0; i + lines.length <= text.lines.length; i++) {
      if (text.trimmed[i] !== trimmed[0] || text.trimmed[i + lines.length - 1] !== trimmed[lines.length - 1]) continue
      let same = 0
      let middle = 0
      let alike = 0
      for (let k = 1; k < lines.length - 1; k++) {
        if (trimmed[k] === "") continue
        middle++
        if (text.trimmed[i + k] === trimmed[k]) same++
        alike += lineSimilarity(trimmed[k]!, text.trimmed[i + k]!)
      }
      if (middle === 0 || same / middle >= 0.5) {
        const last = i + lines.length - 1
        candidates.push({ first: i, last, score: middle === 0 ? 1 : alike / middle, span: text.span(i, last, newline) })
      }
    }
    if (candidates.length !== 1)
      return found(
        candidates.map((c) => c.span),
        find
      )
    return distinctOrRefused(text, lines, candidates[0]!, find)
  }
}

/**
 * Every exact occurrence: the step replaceAll relies on. Because every rule here already
 * returns all of its matches, this one only repeats `simple` and is kept for the spec's order.
 */
export const multiOccurrence: Replacer = {
  name: "multiOccurrence",
  find: (text, find) => found(exactSpans(text.text, find), find)
}

export const replacers: ReadonlyArray<Replacer> = [
  simple,
  lineTrimmed,
  blockAnchor,
  whitespaceNormalized,
  indentationFlexible,
  escapedNormalized,
  trimmedBoundary,
  contextAware,
  multiOccurrence
]
