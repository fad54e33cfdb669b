import { describe, expect, it } from "@effect/vitest"
import { estimateTokens, summarize } from "../../src/cli/estimate.ts"

describe("estimateTokens", () => {
  it("is ceil(compact JSON characters / 4)", () => {
    expect(estimateTokens({ a: 1 })).toBe(2) // {"a":1} = 7 chars
    expect(estimateTokens({ name: "x".repeat(30) })).toBe(Math.ceil(`{"name":"${"x".repeat(30)}"}`.length / 4))
  })
})

describe("summarize", () => {
  it("keeps the first sentence; an abbreviation does not end it", () => {
    expect(summarize("Search file contents with a regex (ripgrep syntax). Returns lines.")).toBe(
      "Search file contents with a regex (ripgrep syntax)."
    )
    expect(summarize("Find files (e.g. `*.ts`). More.")).toBe("Find files (e.g. `*.ts`).")
    expect(summarize("One line\nSecond line.")).toBe("One line")
  })

  it("cuts a long sentence at a word, at most 100 characters", () => {
    const long = `${"word ".repeat(40)}end.`
    const s = summarize(long)
    expect(s.length).toBeLessThanOrEqual(100)
    expect(s).toMatch(/word…$/)
  })
})
