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
