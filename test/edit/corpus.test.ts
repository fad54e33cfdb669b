import { describe, expect, it } from "@effect/vitest"
import { cases } from "../fixtures/edits/cases.ts"
import { gradeAll, gradeCase, summarize } from "../fixtures/edits/corpus.ts"

describe("edit corpus (test/fixtures/edits)", () => {
  it("has at least 80 cases covering every mistake class and every refusal", () => {
    expect(cases.length).toBeGreaterThanOrEqual(80)
    const kinds = new Set(cases.map((c) => c.kind))
    for (const kind of [
      "wrong indentation",
      "tabs vs spaces",
      "trailing whitespace",
      "literal escapes",
      "stale middle line",
      "missing blank line",
      "extra blank line",
      "partial line",
      "CRLF sent LF",
      "absent",
      "ambiguous",
      "look-alike decoy",
      "identical"
    ]) {
      expect(kinds, kind).toContain(kind)
    }
    const errors = new Set(cases.flatMap((c) => ("error" in c.expect ? [c.expect.error] : [])))
    expect([...errors].sort()).toEqual(["Ambiguous", "EmptyOld", "NoChange", "NotFound"])
  })

  it("meets the targets: ≥ 97% exact bytes, 0 wrong place or accepted decoy", () => {
    const s = summarize(gradeAll())
    expect(s.wrongPlace).toBe(0)
    expect(s.exactRate).toBeGreaterThanOrEqual(0.97)
  })

  it.each(cases.map((c) => [c.name, c] as const))("%s", (_name, c) => {
    const graded = gradeCase(c)
    expect(graded.grade === "exact" ? "exact" : `${graded.grade}: ${graded.detail}`).toBe("exact")
  })
})
