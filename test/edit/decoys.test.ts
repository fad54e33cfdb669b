import { stripTypeScriptTypes } from "node:module"
import { describe, expect, it } from "@effect/vitest"
import { Effect, FileSystem } from "effect"
import fc from "fast-check"
import { applyEdit, applyEditToBytes } from "../../src/edit/apply.ts"
import { joinPath } from "../../src/path/path.ts"
import { EditTool } from "../../src/tools/edit.ts"
import { cases } from "../fixtures/edits/cases.ts"
import { loadFile } from "../fixtures/edits/corpus.ts"
import { decoys } from "../fixtures/edits/decoys.ts"
import { run } from "../tools/helpers.ts"
import { ctxFor, layer } from "./helpers.ts"

/** Whether TypeScript (or JavaScript) source parses. */
const parses = (source: string): boolean => {
  try {
    stripTypeScriptTypes(source)
    return true
  } catch {
    return false
  }
}

describe("decoys and near misses (test/fixtures/edits/decoys.ts)", () => {
  it.each(decoys.map((d) => [d.name, d] as const))("%s", (_name, d) => {
    const out = applyEdit(d.text, { oldString: d.oldString, newString: d.newString })
    if (d.expect === "refused") {
      expect(out._tag).not.toBe("Applied")
      return
    }
    expect(out._tag === "Applied" ? out.text : `${out._tag}: ${out.message}`).toBe(d.expect)
    if (parses(d.text)) expect(parses(d.expect)).toBe(true)
  })

  it("a header over a look-alike body is refused, showing both regions with read's line numbers", () => {
    const d = decoys.find((x) => x.name === "one function's header over a look-alike function's body")!
    const { text, oldString } = d
    const out = applyEdit(text, { oldString, newString: oldString.replace("validateOrder(data)", "check(data)") })
    expect(out._tag).toBe("Ambiguous")
    if (out._tag !== "Ambiguous") return
    expect(out.lines).toEqual([1, 7])
    expect(out.message).toContain("1\texport function parseUser(raw: string): User {")
    expect(out.message).toContain("9\t  validateOrder(data)")
    expect(out.message).toContain("no edit was made")
  })
})

describe("the project's edit corpus never breaks syntax", () => {
  it("every edit of a TypeScript or JavaScript file that parsed still parses", () => {
    const dec = new TextDecoder("utf-8", { ignoreBOM: true })
    let checked = 0
    for (const c of cases.filter((x) => /\.(ts|js)$/.test(x.file))) {
      const bytes = loadFile(c.file)
      if (!parses(dec.decode(bytes))) continue
      const out = applyEditToBytes(bytes, {
        oldString: c.oldString,
        newString: c.newString,
        ...(c.replaceAll === undefined ? {} : { replaceAll: c.replaceAll })
      })
      if (out._tag !== "Applied") continue
      checked++
      expect(parses(dec.decode(out.bytes)), c.name).toBe(true)
    }
    expect(checked).toBeGreaterThan(10)
  })
})

// Lines from a small vocabulary, so generated files repeat lines and anchors collide.
const VOCAB = [
  "function f() {",
  "function g() {",
  "}",
  "",
  "  return 1",
  "  return 2",
  '  const s = "a “b” c"',
  "  const t = 'x'",
  "\tif (x) {",
  "\t}",
  "  call(a, b)  ",
  "// note"
]
const lineArb = fc.constantFrom(...VOCAB)
/** A slip a model makes in one line of oldString. */
const slip = fc.constantFrom(
  (l: string) => l,
  (l: string) => l.trim(),
  (l: string) => `  ${l}`,
  (l: string) => l.replace(/“|”/g, '"'),
  (l: string) => l.replace(/1/g, "3"),
  (l: string) => `${l}x`
)

describe("property: a refused edit changes no byte", () => {
  it("over generated files and oldStrings (seeded, bounded)", async () => {
    const program = (
      file: ReadonlyArray<string>,
      from: number,
      len: number,
      slips: ReadonlyArray<(l: string) => string>,
      newString: string
    ) =>
      Effect.gen(function* () {
        const fs = yield* FileSystem.FileSystem
        const root = yield* fs.makeTempDirectoryScoped({ prefix: "freecode-prop-" })
        const path = joinPath(root, "f.ts")
        const text = `${file.join("\n")}\n`
        yield* fs.writeFileString(path, text)
        const picked = file.slice(from, from + len)
        const oldString = picked.map((l, i) => slips[i % slips.length]!(l)).join("\n")
        const result = yield* run(EditTool, { filePath: path, oldString, newString }, ctxFor(root)).pipe(Effect.result)
        const after = yield* fs.readFileString(path)
        if (result._tag === "Failure") expect(after).toBe(text)
        else expect(after).not.toBe(text)
        return result._tag
      }).pipe(Effect.scoped, Effect.provide(layer))
    const tags = new Map<string, number>()
    await fc.assert(
      fc.asyncProperty(
        fc.array(lineArb, { minLength: 3, maxLength: 30 }),
        fc.nat(),
        fc.integer({ min: 1, max: 6 }),
        fc.array(slip, { minLength: 1, maxLength: 4 }),
        fc.array(lineArb, { maxLength: 4 }).map((ls) => ls.join("\n")),
        async (file, start, len, slips, newString) => {
          const tag = await Effect.runPromise(program(file, start % file.length, len, slips, newString))
          tags.set(tag, (tags.get(tag) ?? 0) + 1)
        }
      ),
      { seed: 18, numRuns: 150 }
    )
    // The generator reaches both outcomes, so the property is not vacuous.
    expect(tags.get("Failure") ?? 0).toBeGreaterThan(10)
    expect(tags.get("Success") ?? 0).toBeGreaterThan(10)
  })
})
