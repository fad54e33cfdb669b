/**
 * Which trigrams a file must hold for a grep pattern to match in it: a query of ANDs and ORs
 * over trigrams (three folded UTF-16 code units, as grams.ts keeps them), after Russ Cox's
 * "Regular Expression Matching with a Trigram Index" (the method of Google Code Search), in
 * a smaller form: each part of the pattern is either a short list of the exact strings it can
 * match, or a query its matches must satisfy. `abc|abd` needs `abc` or `abd`; `foo\d+bar`
 * needs `foo` and `bar`; `[Hh]ello` needs `hel`, `ell`, `llo`. A pattern with no required
 * literal of three characters (`\w+`, `a.b`) has no query: it is searched in full.
 *
 * The query only narrows which files are searched: a file it lets through is searched by the
 * real matcher, so a query may be weaker than it could be, never stronger.
 */
import type { GramQuery } from "./grams.ts"
import { type Node, parseRegex } from "./regex-syntax.ts"

export type { GramQuery } from "./grams.ts"

const ALL: GramQuery = { op: "all" }
/** Most exact strings a part keeps before it becomes a query. */
const MAX_EXACT = 64
/** Most trigrams in a query: past it an AND keeps its first ones, an OR gives up. */
const MAX_GRAMS = 256

interface Info {
  /** Every string the part can match, when few. */
  readonly exact?: ReadonlyArray<string>
  readonly query: GramQuery
}

const size = (q: GramQuery): number =>
  q.op === "all" ? 0 : q.op === "gram" ? 1 : q.subs.reduce((n, s) => n + size(s), 0)

const and = (qs: ReadonlyArray<GramQuery>): GramQuery => {
  const subs: Array<GramQuery> = []
  const grams = new Set<string>()
  let total = 0
  for (const q of qs.flatMap((x) => (x.op === "and" ? x.subs : [x]))) {
    if (q.op === "all") continue
    if (q.op === "gram") {
      if (grams.has(q.gram)) continue
      grams.add(q.gram)
    }
    // Dropping a conjunct only weakens the query.
    const n = size(q)
    if (total + n > MAX_GRAMS) continue
    total += n
    subs.push(q)
  }
  return subs.length === 0 ? ALL : subs.length === 1 ? subs[0]! : { op: "and", subs }
}

const or = (qs: ReadonlyArray<GramQuery>): GramQuery => {
  const subs = qs.flatMap((x) => (x.op === "or" ? x.subs : [x]))
  if (subs.length === 0 || subs.some((q) => q.op === "all")) return ALL
  if (subs.reduce((n, s) => n + size(s), 0) > MAX_GRAMS) return ALL
  return subs.length === 1 ? subs[0]! : { op: "or", subs }
}

/** Every trigram of each string, ORed over the strings; nothing when one is shorter than three. */
const gramsOf = (strings: ReadonlyArray<string>): GramQuery => {
  if (strings.some((s) => s.length < 3)) return ALL
  return or(
    strings.map((s) => {
      const grams: Array<GramQuery> = []
      for (let k = 0; k + 3 <= s.length; k++) grams.push({ op: "gram", gram: s.slice(k, k + 3) })
      return and(grams)
    })
  )
}

const toQuery = (info: Info): GramQuery => (info.exact !== undefined ? gramsOf(info.exact) : info.query)

const cross = (a: ReadonlyArray<string>, b: ReadonlyArray<string>): Array<string> => {
  const out = new Set<string>()
  for (const x of a) for (const y of b) out.add(x + y)
  return [...out]
}

const analyze = (node: Node): Info => {
  switch (node.t) {
    case "chars":
      return { exact: node.set, query: ALL }
    case "any":
      return { query: ALL }
    case "empty":
      return { exact: [""], query: ALL }
    case "cat": {
      // A run of exact parts is kept as their product, so trigrams across them count.
      const parts: Array<GramQuery> = []
      let run: ReadonlyArray<string> = [""]
      let exact = true
      for (const x of node.xs) {
        const info = analyze(x)
        if (info.exact !== undefined && run.length * info.exact.length <= MAX_EXACT) {
          run = cross(run, info.exact)
          continue
        }
        exact = false
        parts.push(gramsOf(run))
        if (info.exact !== undefined) run = info.exact
        else {
          parts.push(info.query)
          run = [""]
        }
      }
      if (exact) return { exact: run, query: ALL }
      parts.push(gramsOf(run))
      return { query: and(parts) }
    }
    case "alt": {
      const infos = node.xs.map(analyze)
      if (infos.every((x) => x.exact !== undefined)) {
        const union = [...new Set(infos.flatMap((x) => x.exact!))]
        if (union.length <= MAX_EXACT) return { exact: union, query: ALL }
      }
      return { query: or(infos.map(toQuery)) }
    }
    case "rep": {
      const info = analyze(node.x)
      if (node.min === 0) {
        if (node.max === 1 && info.exact !== undefined && info.exact.length < MAX_EXACT) {
          return { exact: [...new Set(["", ...info.exact])], query: ALL }
        }
        return { query: ALL }
      }
      // At least one repetition: its requirement holds.
      return { query: toQuery(info) }
    }
  }
}

/** The query a file's trigrams must satisfy for `pattern` to match in it; undefined: none (search every file). */
export const gramQuery = (pattern: string, caseInsensitive: boolean): GramQuery | undefined => {
  const node = parseRegex(pattern, caseInsensitive)
  if (node === undefined) return undefined
  const query = toQuery(analyze(node))
  return query.op === "all" ? undefined : query
}
