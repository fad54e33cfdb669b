import { describe, expect, it } from "vitest"
import { compileModelRegex, isRefusal, type ModelRegex, type RegexRefusal } from "../../src/text/regex.ts"

const compiled = (pattern: string): ModelRegex => {
  const r = compileModelRegex(pattern)
  if (isRefusal(r)) throw new Error(`refused ${pattern}: ${r.message}`)
  return r
}
const refused = (pattern: string): RegexRefusal => {
  const r = compileModelRegex(pattern)
  if (!isRefusal(r)) throw new Error(`accepted ${pattern}`)
  return r
}

describe("model-supplied regexes", () => {
  it("run in linear time: (a+)+$ on a long line that does not match returns, with the right answer", () => {
    const evil = compiled("(a+)+$")
    // A backtracking engine takes 2^n steps here; 100,000 would not finish in the life of the machine.
    expect(evil.test(`${"a".repeat(100_000)}!`)).toBe(false)
    expect(evil.test("a".repeat(100_000))).toBe(true)
    expect(compiled("(x+x+)+y").test("x".repeat(50_000))).toBe(false)
    expect(compiled("^(\\w+\\s?)*$").test(`${"word ".repeat(20_000)}!`)).toBe(false)
  })

  it("keep ripgrep's syntax: inline flags, classes, Unicode, captureless lookbehind", () => {
    expect(compiled("(?i)error").test("FATAL ERROR")).toBe(true)
    expect(compiled("\\berr\\b").test("an err here")).toBe(true)
    expect(compiled("[[:digit:]]{3}").test("code 404")).toBe(true)
    expect(compiled("\\p{Greek}+").test("λόγος")).toBe(true)
    expect(compiled("^.$").test("😀")).toBe(true)
    expect(compiled("(?<=v)1").test("v1")).toBe(true)
    expect(compiled("(?<!v)1").test("v1")).toBe(false)
    expect(compiled("\\-x").test("a-x")).toBe(true)
    // JavaScript escapes are translated: models write them.
    expect(compiled("caf\\u00e9").test("café")).toBe(true)
    expect(compiled("\\u{1F600}").test("smile 😀")).toBe(true)
    expect(compiled("\\\\u00e9").test("\\u00e9")).toBe(true)
  })

  it("refuse what cannot run in linear time with a typed message saying what to write instead", () => {
    expect(refused("(a)\\1").message).toMatch(/Backreferences .* not supported.*match the repeated text itself/)
    expect(refused("(?<n>a)\\k<n>").message).toMatch(/Backreferences/)
    expect(refused("foo(?=bar)").message).toMatch(/Lookahead .*foo\(\?=bar\) → foobar/)
    expect(refused("foo(?!bar)").message).toMatch(/Lookahead/)
    expect(refused("(?>a+)b").message).toMatch(/Atomic groups .* \(\?:…\)/)
    expect(refused("a++").message).toMatch(/Possessive .* \(a\+\)/)
    expect(refused("a{5000}").message).toMatch(/at most 1000/)
    expect(refused("(unclosed").message).toMatch(/missing closing \).*RE2 syntax.*Escape regex metacharacters/)
    for (const r of ["(a)\\1", "foo(?=bar)", "(unclosed", "[a-"]) expect(refused(r)._tag).toBe("RegexRefusal")
  })
})
