/**
 * A model's glob matched in linear time: the same answers as picomatch (differential, seeded),
 * and a hostile glob on a long name answers at once.
 */
import fc from "fast-check"
import picomatch from "picomatch"
import { describe, expect, it } from "vitest"
import { compileModelGlob } from "../../src/text/glob.ts"
import { isRefusal } from "../../src/text/regex.ts"
import { compileGlob } from "../../src/tools/glob.ts"
import { compileInclude } from "../../src/tools/search/walk.ts"

const matcher = (glob: string, basename = false) => {
  const m = compileModelGlob(glob, { basename })
  if (isRefusal(m)) throw new Error(m.message)
  return m
}

const segment = fc
  .array(fc.constantFrom("a", "b", "x", ".", "-", "_", "1", "ts", "md"), { minLength: 1, maxLength: 6 })
  .map((p) => p.join(""))
  .filter((s) => s !== "." && s !== "..")
const path = fc.array(segment, { minLength: 1, maxLength: 4 }).map((s) => s.join("/"))
const globPart = fc.constantFrom(
  "*",
  "**",
  "?",
  "a",
  "b",
  ".ts",
  ".md",
  "{a,b}",
  "{ts,md}",
  "[ab]",
  "[!a]",
  "+(a|b)",
  "@(x|ts)",
  "?(a)",
  "*(b)",
  "x",
  "-",
  "1"
)
const glob = fc
  .array(
    fc.array(globPart, { minLength: 1, maxLength: 4 }).map((p) => p.join("")),
    { minLength: 1, maxLength: 3 }
  )
  .map((s) => s.join("/"))

describe("model globs", () => {
  it("answer as picomatch does (dot: true, with and without basename)", () => {
    fc.assert(
      fc.property(glob, fc.array(path, { minLength: 1, maxLength: 8 }), fc.boolean(), (g, paths, basename) => {
        const ours = matcher(g, basename)
        const theirs = picomatch(g, { dot: true, ...(basename ? { basename: true } : {}) })
        for (const p of paths) expect([g, p, ours(p)]).toEqual([g, p, theirs(p)])
      }),
      { seed: 19, numRuns: 400 }
    )
  })

  // Globs of letters, `*`, `.`, `-`, `,` and `{a,b}` groups are matched with string tests, not
  // picomatch's regex (glob.ts's simpleNameGlob): on names and on paths, they must agree with it.
  it("answer as picomatch does for the globs matched without a regex", () => {
    const piece = fc.constantFrom("*", "a", "b", "ab", ".", ".ts", "-", "_", "1", ",", "x")
    const word = fc.array(piece, { minLength: 0, maxLength: 3 }).map((p) => p.join(""))
    const group = fc.array(word, { minLength: 2, maxLength: 3 }).map((ws) => `{${ws.join(",")}}`)
    const simple = fc
      .array(fc.oneof(piece, piece, group), { minLength: 1, maxLength: 5 })
      .map((p) => p.join(""))
      .filter((g) => !g.includes("**") && !g.includes(".."))
    const name = fc
      .array(fc.constantFrom("a", "b", "ab", ".", ".ts", "-", "_", "1", ",", "x", "{", "}", "*"), {
        minLength: 1,
        maxLength: 7
      })
      .map((p) => p.join(""))
    fc.assert(
      fc.property(simple, fc.array(name, { minLength: 1, maxLength: 10 }), fc.boolean(), (g, names, basename) => {
        // A few (`{.*,}`) keep a lookahead that RE2JS cannot run: refused, as before.
        if (isRefusal(compileModelGlob(g, { basename }))) return
        const ours = matcher(g, basename)
        const theirs = picomatch(g, { dot: true, ...(basename ? { basename: true } : {}) })
        // A generated name may equal the glob, or a name of one of its alternatives.
        for (const n of [...names, g, `x/${names[0]}`, `${names[0]}/y`]) {
          if (n === "." || n === ".." || n.split("/").some((s) => s === "" || s === "." || s === "..")) continue
          expect([g, n, ours(n)]).toEqual([g, n, theirs(n)])
        }
      }),
      { seed: 31, numRuns: 3000 }
    )
    // The cases the generator may not reach: every group alternative, and names with dots.
    for (const [g, yes, no] of [
      ["*.{ts,tsx}", ["a.ts", ".ts", "a.b.tsx"], ["a.t", "ts", "a.tsx.x"]],
      ["test_*.py", ["test_.py", "test_a.py"], ["test.py", "atest_a.py"]],
      ["{a,b}*{c,d}", ["ac", "bxd", "ad"], ["ca", "a", "x"]],
      ["*a*b*", ["ab", "xaybz"], ["ba", "b"]]
    ] as const) {
      for (const n of yes) expect([g, n, matcher(g)(n)]).toEqual([g, n, true])
      for (const n of no) expect([g, n, matcher(g)(n)]).toEqual([g, n, false])
    }
  })

  it("a hostile glob on a long name answers at once", () => {
    const name = `${"a".repeat(5000)}.txt`
    for (const g of ["+(a|aa)*b", "*a*a*a*a*a*a*a*b", "**/*a*a*a*a*a*a*a*a*a*a*b", "@(a+)+b"]) {
      expect(matcher(g)(name)).toBe(false)
      expect(matcher(g)(`dir/${name}`)).toBe(false)
    }
    expect(matcher("*a*a*a*a*a*.txt")(name)).toBe(true)
    // Through the glob tool's compiler and grep's include filter, as the tools use them.
    expect(compileGlob("+(a|aa)*b", "/p").matches(`src/${name}`)).toBe(false)
    expect(compileGlob("src/**/*a*a*a*a*a*a*a*b", "/p").matches(`src/x/${name}`)).toBe(false)
    const include = compileInclude("*a*a*a*a*a*a*a*b")
    expect(typeof include === "function" && include(name)).toBe(false)
  })

  it("a negated extglob is refused, saying what to use instead", () => {
    const r = compileModelGlob("!(foo)*.ts")
    expect(isRefusal(r) && r.message).toMatch(/negated patterns .* plain glob/)
    expect(() => compileGlob("!(foo)*.ts", "/p")).toThrow(/negated patterns/)
    expect(compileInclude("!(foo)*.ts")).toMatchObject({ _tag: "SearchFailed" })
  })
})
