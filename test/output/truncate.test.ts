import { describe, expect, it } from "@effect/vitest"
import { adaptiveTruncate, countLines, splitLines, tailCap } from "../../src/output/truncate.ts"

const marker = ({ fromLine, toLine, totalLines }: { fromLine: number; toLine: number; totalLines: number }) =>
  `[omitted ${fromLine}-${toLine} of ${totalLines}]`
const numbered = (n: number) => Array.from({ length: n }, (_, i) => `line ${i + 1}`).join("\n")

describe("adaptiveTruncate", () => {
  it("returns short text unchanged", () => {
    expect(adaptiveTruncate("a\nb\n", { maxChars: 100, maxLines: 10, direction: "both", marker })).toEqual({
      text: "a\nb\n",
      truncated: false
    })
  })

  it("keeps head and tail on whole lines, with a marker naming the omitted range", () => {
    const text = numbered(1000)
    const out = adaptiveTruncate(text, { maxChars: 500, maxLines: 1000, direction: "both", marker })
    expect(out.truncated).toBe(true)
    expect(out.text.length).toBeLessThanOrEqual(500)
    const lines = out.text.split("\n")
    expect(lines[0]).toBe("line 1")
    expect(lines[lines.length - 1]).toBe("line 1000")
    // Every kept line is whole: it is one of the original lines or the marker.
    const originals = new Set(text.split("\n"))
    for (const line of lines) expect(originals.has(line) || line.startsWith("[omitted")).toBe(true)
    const { fromLine, toLine } = out.omitted!
    expect(out.text).toContain(`[omitted ${fromLine}-${toLine} of 1000]`)
    expect(lines).toContain(`line ${fromLine - 1}`)
    expect(lines).toContain(`line ${toLine + 1}`)
    expect(lines).not.toContain(`line ${fromLine}`)
    // The tail gets the larger share: errors and summaries live at the end.
    expect(1000 - toLine).toBeGreaterThan(fromLine - 1)
  })

  it("head mode keeps the beginning; tail mode keeps the end", () => {
    const text = numbered(100)
    const head = adaptiveTruncate(text, { maxChars: 10_000, maxLines: 10, direction: "head", marker })
    expect(head.text.split("\n").slice(0, 9)).toEqual(numbered(9).split("\n"))
    expect(head.omitted).toEqual({ fromLine: 10, toLine: 100, totalLines: 100, omittedChars: expect.any(Number) })
    const tail = adaptiveTruncate(text, { maxChars: 10_000, maxLines: 10, direction: "tail", marker })
    expect(tail.text.startsWith("[omitted 1-91 of 100]")).toBe(true)
    expect(tail.text.endsWith("line 100")).toBe(true)
  })

  it("applies the line budget as well as the character budget", () => {
    const out = adaptiveTruncate(numbered(50), { maxChars: 100_000, maxLines: 20, direction: "both", marker })
    expect(out.text.split("\n").length).toBeLessThanOrEqual(20)
    expect(out.truncated).toBe(true)
  })

  it("cuts one over-long line at a character boundary with a marker, never inside a surrogate pair", () => {
    const text = "😀".repeat(5000)
    const out = adaptiveTruncate(text, { maxChars: 1000, maxLines: 10, direction: "both", marker })
    expect(out.truncated).toBe(true)
    expect(out.text.length).toBeLessThanOrEqual(1000)
    expect(out.text).toMatch(/characters omitted from this line/)
    // No lone surrogate anywhere.
    expect(out.text).not.toMatch(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/)
  })

  it("cuts a huge first line of a multi-line output instead of returning nothing", () => {
    const text = `${"x".repeat(50_000)}\nshort\n`
    const out = adaptiveTruncate(text, { maxChars: 2000, maxLines: 100, direction: "head", marker })
    expect(out.text.length).toBeLessThanOrEqual(2000)
    expect(out.text.startsWith("xxx")).toBe(true)
    expect(out.text).toContain("[omitted 2-2 of 2]")
  })
})

describe("line helpers", () => {
  it("splitLines keeps terminators and round-trips; countLines agrees", () => {
    for (const text of ["", "a", "a\n", "a\nb", "a\r\nb\r\n", "\n\n"]) {
      expect(splitLines(text).join("")).toBe(text)
      expect(countLines(text)).toBe(splitLines(text).length)
    }
  })

  it("tailCap keeps the end and starts on a line boundary when one is near", () => {
    const text = numbered(1000)
    const out = tailCap(text, 100)
    expect(out.length).toBeLessThanOrEqual(100)
    expect(text.endsWith(out)).toBe(true)
    expect(out.startsWith("line ")).toBe(true)
    expect(tailCap("short", 100)).toBe("short")
  })
})
