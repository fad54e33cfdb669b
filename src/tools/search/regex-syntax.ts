/**
 * Just enough of ripgrep's regex syntax (RE2's) to see which characters every match must
 * contain, for the n-gram filter (literals.ts). It reads a pattern the regex engine already
 * accepted and gives up (undefined) on anything it does not know for sure — an escape, a group
 * or a flag outside the list below — so that a pattern it misreads is searched in full rather
 * than filtered wrongly. Characters come out folded (grams.ts's `foldUnit`), as the index
 * keeps file text.
 *
 * Why not a library: re2js keeps its parser internal, and the JavaScript-syntax parsers
 * (regexpp, regexp-tree) read `[[:alpha:]]`, `\Q…\E`, `(?i)` or `\pL` as something else, which
 * here would mean a filter that drops files that match. docs/search.md.
 */
import { foldUnit } from "./grams.ts"

export type Node =
  /** One character from this set (folded, each one UTF-16 code unit). */
  | { readonly t: "chars"; readonly set: ReadonlyArray<string> }
  /** Any one character, or a class too large to list. */
  | { readonly t: "any" }
  /** Matches the empty string (anchors, word boundaries, lookbehinds). */
  | { readonly t: "empty" }
  | { readonly t: "cat"; readonly xs: ReadonlyArray<Node> }
  | { readonly t: "alt"; readonly xs: ReadonlyArray<Node> }
  | { readonly t: "rep"; readonly x: Node; readonly min: number; readonly max: number }

const ANY: Node = { t: "any" }
const EMPTY: Node = { t: "empty" }
/** Characters a small class may list before it counts as any character. */
const MAX_SET = 16
const MAX_DEPTH = 200

class Unknown extends Error {}
const unknown = (): never => {
  throw new Unknown()
}

interface Flags {
  fold: boolean
}

/**
 * One character as the filter sees it: folded, or any character when folding could make it
 * match text that folds to something else (a non-ASCII letter under `-i`), or when it is
 * outside the BMP (two code units).
 */
const charNode = (code: number, flags: Flags): Node => {
  const c = charOf(code, flags)
  return c === undefined ? ANY : { t: "chars", set: [c] }
}

const charOf = (code: number, flags: Flags): string | undefined => {
  if (code > 0xffff) return undefined
  const folded = foldUnit(code)
  if (flags.fold && folded >= 0x80) return undefined
  return String.fromCharCode(folded)
}

const PUNCT = /[!-/:-@[-`{-~]/
const CONTROL: Readonly<Record<string, number>> = { n: 10, t: 9, r: 13, f: 12, v: 11, a: 7 }
const REPEAT = /\{(\d+)(?:(,)(\d*))?\}/y
const FLAG_GROUP = /\(\?([imsU]*)(?:-([imsU]*))?([:)])/y
const NAMED = /\(\?P?<[A-Za-z0-9_]+>/y

/** The pattern's syntax tree, or undefined when some part of it is not understood. */
export const parseRegex = (pattern: string, caseInsensitive: boolean): Node | undefined => {
  let i = 0
  const p = pattern
  let depth = 0

  const codeAt = (at: number): number => p.codePointAt(at) ?? unknown()
  const width = (code: number) => (code > 0xffff ? 2 : 1)

  /** `\x41`, `\x{41}`, `\n`, `\.`: a single character, or undefined for a class escape. */
  const escapedChar = (inClass: boolean): number | "class" => {
    const c = p[i + 1] ?? unknown()
    if ("dDwWsS".includes(c)) {
      i += 2
      return "class"
    }
    if (c === "p" || c === "P") {
      if (p[i + 2] === "{") {
        const end = p.indexOf("}", i + 3)
        if (end < 0) unknown()
        i = end + 1
      } else i += 3
      return "class"
    }
    if (c === "x") {
      if (p[i + 2] === "{") {
        const end = p.indexOf("}", i + 3)
        const hex = p.slice(i + 3, end)
        if (end < 0 || !/^[0-9a-fA-F]{1,6}$/.test(hex)) unknown()
        i = end + 1
        return Number.parseInt(hex, 16)
      }
      const hex = p.slice(i + 2, i + 4)
      if (!/^[0-9a-fA-F]{2}$/.test(hex)) unknown()
      i += 4
      return Number.parseInt(hex, 16)
    }
    const control = CONTROL[c]
    if (control !== undefined) {
      i += 2
      return control
    }
    if (PUNCT.test(c)) {
      i += 2
      return c.charCodeAt(0)
    }
    if (inClass) unknown()
    return unknown()
  }

  const parseClass = (flags: Flags): Node => {
    i++ // [
    const negated = p[i] === "^"
    if (negated) i++
    const set = new Set<string>()
    let tooBig = false
    let first = true
    const add = (code: number) => {
      const c = charOf(code, flags)
      if (c === undefined) tooBig = true
      else set.add(c)
    }
    /** One class member: a character, or "class" for `\d`, `[:alpha:]` and the like. */
    const member = (): number | "class" => {
      const c = p[i] ?? unknown()
      if (c === "[" && p[i + 1] === ":") {
        const end = p.indexOf(":]", i + 2)
        if (end < 0) unknown()
        i = end + 2
        return "class"
      }
      if (c === "\\") return escapedChar(true)
      const code = codeAt(i)
      i += width(code)
      return code
    }
    for (;;) {
      if (i >= p.length) unknown()
      if (p[i] === "]" && !first) {
        i++
        break
      }
      first = false
      const lo = member()
      if (p[i] === "-" && p[i + 1] !== undefined && p[i + 1] !== "]") {
        i++
        const hi = member()
        if (lo === "class" || hi === "class") unknown()
        const from = lo as number
        const to = hi as number
        if (to - from > MAX_SET) tooBig = true
        else for (let code = from; code <= to; code++) add(code)
      } else if (lo === "class") tooBig = true
      else add(lo)
    }
    if (negated || tooBig || set.size > MAX_SET) return ANY
    return { t: "chars", set: [...set] }
  }

  /** An atom, or undefined for a bare flag group `(?i)` (which changes `flags`). */
  const parseAtom = (flags: Flags): Node | undefined => {
    const c = p[i]!
    if (c === "(") {
      let inner: Flags = { fold: flags.fold }
      let lookbehind = false
      if (p[i + 1] === "?") {
        FLAG_GROUP.lastIndex = i
        NAMED.lastIndex = i
        const flagGroup = FLAG_GROUP.exec(p)
        if (p.startsWith("(?:", i)) i += 3
        else if (p.startsWith("(?<=", i) || p.startsWith("(?<!", i)) {
          lookbehind = true
          i += 4
        } else if (NAMED.test(p)) i = NAMED.lastIndex
        else if (flagGroup !== null) {
          const on = flagGroup[1] ?? ""
          const off = flagGroup[2] ?? ""
          const fold = on.includes("i") ? true : off.includes("i") ? false : flags.fold
          i += flagGroup[0].length
          if (flagGroup[3] === ")") {
            flags.fold = fold
            return undefined
          }
          inner = { fold }
        } else unknown()
      } else i++
      if (++depth > MAX_DEPTH) unknown()
      const node = parseAlt(inner)
      depth--
      if (p[i] !== ")") unknown()
      i++
      // A lookbehind's text is before the match: nothing the match itself must hold.
      return lookbehind ? EMPTY : node
    }
    if (c === "[") return parseClass(flags)
    if (c === ".") {
      i++
      return ANY
    }
    if (c === "^" || c === "$") {
      i++
      return EMPTY
    }
    if (c === "\\") {
      const next = p[i + 1]
      if (next !== undefined && "bBAz".includes(next)) {
        i += 2
        return EMPTY
      }
      if (next === "C") {
        i += 2
        return ANY
      }
      if (next === "Q") {
        const end = p.indexOf("\\E", i + 2)
        const text = p.slice(i + 2, end < 0 ? p.length : end)
        i = end < 0 ? p.length : end + 2
        const xs: Array<Node> = []
        for (let k = 0; k < text.length; ) {
          const code = text.codePointAt(k)!
          xs.push(charNode(code, flags))
          k += width(code)
        }
        return { t: "cat", xs }
      }
      const code = escapedChar(false)
      return code === "class" ? ANY : charNode(code, flags)
    }
    if (c === "*" || c === "+" || c === "?") unknown()
    if (c === "{") {
      REPEAT.lastIndex = i
      if (REPEAT.test(p)) unknown()
    }
    const code = codeAt(i)
    i += width(code)
    return charNode(code, flags)
  }

  const parseCat = (flags: Flags): Node => {
    const xs: Array<Node> = []
    while (i < p.length && p[i] !== "|" && p[i] !== ")") {
      let atom = parseAtom(flags)
      if (atom === undefined) continue
      for (;;) {
        const q = p[i]
        let min: number
        let max: number
        if (q === "*") [min, max] = [0, Infinity]
        else if (q === "+") [min, max] = [1, Infinity]
        else if (q === "?") [min, max] = [0, 1]
        else if (q === "{") {
          REPEAT.lastIndex = i
          const m = REPEAT.exec(p)
          if (m === null) break
          min = Number(m[1])
          max = m[2] === undefined ? min : m[3] === "" ? Infinity : Number(m[3])
          i = REPEAT.lastIndex - 1
        } else break
        i++
        if (p[i] === "?") i++ // lazy
        atom = { t: "rep", x: atom, min, max }
      }
      xs.push(atom)
    }
    return xs.length === 1 ? xs[0]! : { t: "cat", xs }
  }

  const parseAlt = (flags: Flags): Node => {
    const xs = [parseCat(flags)]
    while (p[i] === "|") {
      i++
      xs.push(parseCat(flags))
    }
    return xs.length === 1 ? xs[0]! : { t: "alt", xs }
  }

  try {
    const node = parseAlt({ fold: caseInsensitive })
    return i === p.length ? node : undefined
  } catch (e) {
    if (e instanceof Unknown || e instanceof RangeError) return undefined
    throw e
  }
}
