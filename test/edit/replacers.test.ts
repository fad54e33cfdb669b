import { describe, expect, it } from "@effect/vitest"
import { applyEdit } from "../../src/edit/apply.ts"
import {
  blockAnchor,
  contextAware,
  escapedNormalized,
  indentationFlexible,
  Lines,
  lineTrimmed,
  multiOccurrence,
  type Replacer,
  replacers,
  simple,
  trimmedBoundary,
  whitespaceNormalized
} from "../../src/edit/replacers.ts"

/** The text each span of a replacer's match covers. */
const matched = (replacer: Replacer, text: string, find: string): Array<string> | undefined =>
  replacer.find(new Lines(text), find)?.spans.map((s) => text.slice(s.start, s.end))

const code = [
  "function total(items) {",
  "  let sum = 0",
  "  for (const item of items) {",
  "    sum += item.price",
  "  }",
  "  return sum",
  "}",
  ""
].join("\n")

describe("the nine replacers", () => {
  it("run in the spec's order", () => {
    expect(replacers.map((r) => r.name)).toEqual([
      "simple",
      "lineTrimmed",
      "blockAnchor",
      "whitespaceNormalized",
      "indentationFlexible",
      "escapedNormalized",
      "trimmedBoundary",
      "contextAware",
      "multiOccurrence"
    ])
  })

  it("simple and multiOccurrence find exact text, every occurrence", () => {
    expect(matched(simple, "a = 1\nb = 1\n", "= 1")).toEqual(["= 1", "= 1"])
    expect(matched(multiOccurrence, "a = 1\nb = 1\n", "= 1")).toEqual(["= 1", "= 1"])
    expect(matched(simple, code, "sum += item.cost")).toBeUndefined()
  })

  it("lineTrimmed ignores each line's surrounding whitespace", () => {
    expect(matched(lineTrimmed, code, "for (const item of items) {\n        sum += item.price  \n")).toEqual([
      "  for (const item of items) {\n    sum += item.price\n"
    ])
    expect(matched(lineTrimmed, code, "sum +=  item.price")).toBeUndefined()
  })

  it("blockAnchor matches first and last lines with a stale middle, above the floor only", () => {
    const stale =
      "function total(items) {\n  let sum = 0\n  for (const item of items) {\n    sum += item.cost\n  }\n  return sum\n}"
    expect(matched(blockAnchor, code, stale)).toEqual([code.slice(0, -1)])
    const other =
      "function total(items) {\n  const x = await fetchAll()\n  cache.clear()\n  emit('done', x)\n  log.info(x)\n  return x\n}"
    expect(matched(blockAnchor, code, other)).toBeUndefined()
  })

  it("whitespaceNormalized lets whitespace runs differ, and appear or vanish next to punctuation", () => {
    expect(matched(whitespaceNormalized, "call(a, b,  c)\n", "call(a,b, c)")).toEqual(["call(a, b,  c)"])
    // Words must still match whole: no match inside a longer identifier.
    expect(matched(whitespaceNormalized, "tokenize(x)\n", "tokeniz")).toBeUndefined()
  })

  it("indentationFlexible finds a block at another indentation with the same relative indentation", () => {
    const find = "for (const item of items) {\n  sum += item.price\n}\n"
    expect(matched(indentationFlexible, code, find)).toEqual([
      "  for (const item of items) {\n    sum += item.price\n  }\n"
    ])
    // Relative indentation differs: not this rule's match.
    expect(matched(indentationFlexible, code, "for (const item of items) {\nsum += item.price\n}\n")).toBeUndefined()
  })

  it("escapedNormalized undoes one level of escaping, and unescapes newString the same way", () => {
    const text = 'const msg = "say \\"hi\\""\nconst two = 2\n'
    const found = escapedNormalized.find(new Lines(text), 'const msg = \\"say \\\\\\"hi\\\\\\"\\"\\nconst two = 2')
    expect(found?.spans.map((s) => text.slice(s.start, s.end))).toEqual(['const msg = "say \\"hi\\""\nconst two = 2'])
    expect(found?.adaptNew?.("a\\nb")).toBe("a\nb")
    expect(matched(escapedNormalized, text, "const two = 2")).toBeUndefined()
  })

  it("trimmedBoundary drops the blank lines around oldString, and the same from newString", () => {
    const found = trimmedBoundary.find(new Lines(code), "\n\n  return sum\n\n")
    expect(found?.spans.map((s) => code.slice(s.start, s.end))).toEqual(["return sum"])
    expect(found?.adaptNew?.("\n\n  return sum * 2\n\n")).toBe("return sum * 2")
    expect(matched(trimmedBoundary, code, "return sum")).toBeUndefined()
  })

  it("contextAware: same anchors and line count, at least half the middle lines equal", () => {
    const half =
      "function total(items) {\n  let total = 0\n  for (const item of items) {\n    total += item.price\n  }\n  return sum\n}"
    expect(matched(contextAware, code, half)).toEqual([code.slice(0, -1)])
    const under =
      "function total(items) {\n  let total = 0\n  for (const x of xs) {\n    total += x.price\n  }\n  return sum\n}"
    expect(matched(contextAware, code, under)).toBeUndefined()
  })

  it("the cascade stops at the first rule that finds anything, so a looser rule never picks between exact matches", () => {
    const text = "x = 1\n  x = 1\n"
    const out = applyEdit(text, { oldString: "x = 1", newString: "x = 2" })
    expect(out._tag).toBe("Ambiguous")
    expect(out._tag === "Ambiguous" && out.lines).toEqual([1, 2])
  })
})
