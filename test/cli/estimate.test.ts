import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { encode } from "gpt-tokenizer/encoding/o200k_base"
import { countTokens, declarationSize, o200kLayer, summarize } from "../../src/cli/estimate.ts"

describe("declarationSize", () => {
  it.effect("counts o200k_base tokens of the compact JSON through effect's Tokenizer, and its characters", () =>
    Effect.gen(function* () {
      const declaration = { name: "read", description: "Read a text file as numbered lines.", inputSchema: {} }
      const text = JSON.stringify(declaration)
      const size = yield* declarationSize(declaration)
      expect(size.chars).toBe(text.length)
      expect(size.tokens).toBe(encode(text).length)
      expect(size.tokens).toBe(countTokens(declaration))
      // Real tokens, not chars/4: this JSON is far denser than one token per 4 characters.
      expect(size.tokens).toBeLessThan(text.length / 3)
      expect(size.tokens).toBeGreaterThan(10)
    }).pipe(Effect.provide(o200kLayer))
  )
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
