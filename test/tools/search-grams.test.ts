/**
 * The n-gram filter never rules out a file the matcher would match in: seeded random patterns
 * (literals, classes, alternations, repeats, groups, flags, escapes, `-i`) against random texts;
 * whenever the real matcher (the walk's, RE2 syntax) finds a match, the file's filter must let
 * it through. Plus fixed cases showing that the filter does narrow.
 */
import { describe, expect, it } from "vitest"
import { compileModelRegex, isRefusal } from "../../src/text/regex.ts"
import { GramStore } from "../../src/tools/search/grams.ts"
import { gramQuery } from "../../src/tools/search/literals.ts"

const prng = (seed: number) => () => {
  seed = (seed + 0x6d2b79f5) | 0
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed)
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296
}

/** Does a file with this text pass the filter for this pattern? */
const passes = (pattern: string, text: string, caseInsensitive = false): boolean => {
  const store = new GramStore()
  store.setText("f", text)
  const query = gramQuery(pattern, caseInsensitive)
  return query === undefined || store.compile(query)(store.get("f"))
}

describe("n-gram filter", () => {
  it("narrows: literals, alternations, classes, -i; no literal: no filter", () => {
    expect(passes("needle", "a haystack\nwith a needle in it")).toBe(true)
    expect(passes("needle", "a haystack\nwith nothing")).toBe(false)
    expect(passes("foo\\(bar, 42\\)", "x = foo(bar, 42)")).toBe(true)
    expect(passes("foo\\(bar, 42\\)", "x = foo(bar, 43)")).toBe(false)
    expect(passes("alpha|gamma", "only gamma here")).toBe(true)
    expect(passes("alpha|gamma", "only beta here")).toBe(false)
    expect(passes("value\\d+ =", "value12 = 3")).toBe(true)
    expect(passes("value\\d+ =", "nothing")).toBe(false)
    expect(passes("[Hh]ello", "hello")).toBe(true)
    expect(passes("[Hh]ello", "jello")).toBe(false)
    expect(passes("HELLO", "say hello", true)).toBe(true)
    expect(passes("(?i)HELLO", "say hello")).toBe(true)
    expect(passes("(?i)HELLO", "say goodbye")).toBe(false)
    expect(passes("(?i)k", "x")).toBe(true)
    expect(passes("(?i)kelvin", "\u212Aelvin")).toBe(true)
    expect(passes("\\Qa.b(c\\E", "a.b(c")).toBe(true)
    expect(passes("\\Qa.b(c\\E", "a.b(d")).toBe(false)
    // No required trigram: no query at all.
    expect(gramQuery("\\w+", false)).toBeUndefined()
    expect(gramQuery("a.b", false)).toBeUndefined()
    expect(gramQuery("abc|d", false)).toBeUndefined()
    expect(gramQuery("(abc)?", false)).toBeUndefined()
    // What it does not know, it does not filter.
    expect(gramQuery("\\u00e9abc", false)).toBeUndefined()
  })

  it("never rules out a matching text (seeded random patterns and texts)", () => {
    const random = prng(31)
    const pick = <A>(xs: ReadonlyArray<A>): A => xs[Math.floor(random() * xs.length)]!
    const alphabet = [
      "a",
      "b",
      "c",
      "A",
      "B",
      "k",
      "K",
      "s",
      "\u212A",
      "\u017F",
      "é",
      "É",
      "\n",
      " ",
      "(",
      ".",
      "1",
      "😀"
    ]
    const atom = (depth: number): string => {
      const r = random()
      if (depth > 2 || r < 0.45) {
        return pick([
          "a",
          "b",
          "c",
          "ab",
          "abc",
          "A",
          "k",
          "s",
          "é",
          "\\.",
          "\\(",
          ".",
          "\\d",
          "\\w",
          "\\s",
          "[ab]",
          "[a-c]",
          "[^a]",
          "[[:alpha:]]",
          "[Kk]",
          "\\x41",
          "\\x{6B}",
          "\\n",
          "^",
          "$",
          "\\b",
          "\\pL",
          "\\Qa.\\E",
          "😀",
          "{",
          "(?i)",
          "(?-i)"
        ])
      }
      if (r < 0.6) return `(${seq(depth + 1)}|${seq(depth + 1)})`
      if (r < 0.7) return `(?:${seq(depth + 1)})`
      if (r < 0.75) return `(?i:${seq(depth + 1)})`
      if (r < 0.8) return `(?P<n${Math.floor(random() * 100)}>${seq(depth + 1)})`
      return `(${seq(depth + 1)})${pick(["*", "+", "?", "{2}", "{1,3}", "{0,}", "+?", "??"])}`
    }
    const seq = (depth: number): string => {
      let out = ""
      const n = 1 + Math.floor(random() * 5)
      for (let i = 0; i < n; i++) {
        out += atom(depth)
        if (random() < 0.2) out += pick(["*", "+", "?", "{2}"])
      }
      return out
    }
    let matched = 0
    let filtered = 0
    const store = new GramStore()
    for (let round = 0; round < 3000; round++) {
      const pattern = seq(0)
      const ci = random() < 0.3
      const multiline = random() < 0.3
      const regex = compileModelRegex(pattern, { caseInsensitive: ci, multiline })
      if (isRefusal(regex)) continue
      const query = gramQuery(pattern, ci)
      for (let t = 0; t < 8; t++) {
        let text = ""
        const n = Math.floor(random() * 40)
        for (let i = 0; i < n; i++) text += pick(alphabet)
        // Sometimes a text built to match: the pattern's own literal characters.
        if (t === 0) text += pattern.replace(/[\\()[\]{}|*+?^$]/g, "")
        const hit = multiline ? regex.test(text) : text.split("\n").some((line) => regex.test(line))
        if (!hit) {
          if (query !== undefined) {
            store.setText("f", text)
            if (!store.compile(query)(store.get("f"))) filtered++
          }
          continue
        }
        matched++
        store.setText("f", text)
        expect({ pattern, ci, text, passes: query === undefined || store.compile(query)(store.get("f")) }).toEqual({
          pattern,
          ci,
          text,
          passes: true
        })
      }
    }
    // The run tested real matches, and the filter did rule some non-matching texts out.
    expect(matched).toBeGreaterThan(1000)
    expect(filtered).toBeGreaterThan(100)
  })

  it("keeps binary files out and forgets a removed file", () => {
    const store = new GramStore()
    store.setBinary("bin")
    store.setText("t", "needle")
    const test = store.compile(gramQuery("needle", false)!)
    expect(test(store.get("bin"))).toBe(false)
    expect(test(store.get("t"))).toBe(true)
    store.remove("t")
    expect(store.get("t")).toBeUndefined()
    // Not indexed: always searched.
    expect(test(store.get("t"))).toBe(true)
    store.setText("t", "haystack")
    expect(test(store.get("t"))).toBe(false)
  })
})
