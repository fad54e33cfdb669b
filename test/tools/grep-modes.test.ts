/**
 * grep's modes (output_mode, -A/-B/-C, -i, multiline, type) on both backends: fixed cases with
 * their exact output, and a seeded differential run where rg and the walk must print the same
 * thing for random trees and random option sets.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { compileModelGlob } from "../../src/text/glob.ts"
import { isRefusal } from "../../src/text/regex.ts"
import { GrepTool } from "../../src/tools/grep.ts"
import { CurrentSearchBackend } from "../../src/tools/search/auto.ts"
import type { SearchBackend } from "../../src/tools/search/backend.ts"
import { FILE_TYPES } from "../../src/tools/search/file-types.ts"
import { loadRipgrepPath, makeRipgrepBackend } from "../../src/tools/search/ripgrep.ts"
import { walkBackend } from "../../src/tools/search/walk.ts"
import { nodeLayer } from "../fs/layers.ts"
import { makeCtx, makeFixture, run, runFailure, writeTree } from "./helpers.ts"

/** mulberry32: a small seeded generator, so a failure replays. */
const prng = (seed: number) => () => {
  seed = (seed + 0x6d2b79f5) | 0
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed)
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296
}

/** Runs the same grep on rg and on the walk; returns both outputs (or failure messages). */
const both = (root: string, args: Record<string, unknown>) =>
  Effect.gen(function* () {
    const rg = makeRipgrepBackend(yield* loadRipgrepPath)
    const on = (backend: SearchBackend) =>
      run(GrepTool, args, makeCtx(root)).pipe(
        Effect.map((o) => o.output),
        Effect.catch((e) => Effect.succeed(`FAILED ${(e as { message: string }).message}`)),
        Effect.provideService(CurrentSearchBackend, backend)
      )
    return [yield* on(rg), yield* on(walkBackend)] as const
  })

const TEXT = "a\nfoo 1\nb\nc\nBAR 2\nd\ne\nf\ng\nfoo 3\n"

describe("grep modes", () => {
  it.live("content with context: rg's layout, each line once, groups apart; the same on both backends", () =>
    Effect.gen(function* () {
      const root = yield* makeFixture
      yield* writeTree(root, { "ctx/x.txt": TEXT, "ctx/y.txt": "foo only\n" })
      const [rg, walk] = yield* both(root, { pattern: "foo|bar", path: "ctx", "-C": 1, "-i": true })
      expect(rg.split("\n")).toEqual([
        "ctx/x.txt-1-a",
        "ctx/x.txt:2:foo 1",
        "ctx/x.txt-3-b",
        "ctx/x.txt-4-c",
        "ctx/x.txt:5:BAR 2",
        "ctx/x.txt-6-d",
        "--",
        "ctx/x.txt-9-g",
        "ctx/x.txt:10:foo 3",
        "--",
        "ctx/y.txt:1:foo only"
      ])
      expect(walk).toBe(rg)
      // -A and -B alone; a page that starts mid-file shows its own matches' context only.
      const [a, aWalk] = yield* both(root, { pattern: "foo", path: "ctx/x.txt", "-A": 2, offset: 1 })
      expect(a.split("\n")).toEqual([
        "ctx/x.txt:10:foo 3",
        "(Showing lines 2-2 of 2 matching lines in 1 file: the last page.)"
      ])
      expect(aWalk).toBe(a)
      const [b, bWalk] = yield* both(root, { pattern: "BAR", path: "ctx", "-B": 2 })
      expect(b.split("\n")).toEqual(["ctx/x.txt-3-b", "ctx/x.txt-4-c", "ctx/x.txt:5:BAR 2"])
      expect(bWalk).toBe(b)
    }).pipe(Effect.provide(nodeLayer))
  )

  it.live("files_with_matches and count: sorted by path, paged over files", () =>
    Effect.gen(function* () {
      const root = yield* makeFixture
      const [files, filesWalk] = yield* both(root, { pattern: "needle", output_mode: "files_with_matches" })
      expect(files.split("\n")).toEqual([
        ".hidden/secret.ts",
        "README.md",
        "docs/guide.txt",
        "logs/keep.log",
        "src/a.ts",
        "src/b.tsx",
        "src/build/keep.js",
        "src/sub/deep/c.ts",
        "src/sub/keep.log",
        "src/sub/local.txt"
      ])
      expect(filesWalk).toBe(files)
      const [count, countWalk] = yield* both(root, {
        pattern: "needle",
        path: "src",
        output_mode: "count",
        head_limit: 2,
        offset: 1
      })
      expect(count.split("\n")).toEqual([
        "src/b.tsx:1",
        "src/build/keep.js:1",
        "(Showing files 2-3 of 6 files with matches; 3 more. Next page: offset=3, head_limit=2; or narrow with a more specific pattern, path or include.)"
      ])
      expect(countWalk).toBe(count)
      const past = yield* runFailure(GrepTool, { pattern: "needle", output_mode: "count", offset: 50 }, makeCtx(root))
      expect(past).toContain("offset 50 is past the last file")
    }).pipe(Effect.provide(nodeLayer))
  )

  it.live("multiline matches span lines; type filters by rg's file types; -i ignores case", () =>
    Effect.gen(function* () {
      const root = yield* makeFixture
      yield* writeTree(root, {
        "m/a.py": "def f(\n    x,\n):\n    pass\n",
        "m/b.ts": "function f(\n  x\n) {}\n",
        "m/Makefile": "all:\n\tNEEDLE\n"
      })
      const [ml, mlWalk] = yield* both(root, { pattern: "f\\(.*?\\)", path: "m", multiline: true })
      expect(ml.split("\n")).toEqual([
        "m/a.py:1:def f(",
        "m/a.py:2:    x,",
        "m/a.py:3:):",
        "m/b.ts:1:function f(",
        "m/b.ts:2:  x",
        "m/b.ts:3:) {}"
      ])
      expect(mlWalk).toBe(ml)
      const [py, pyWalk] = yield* both(root, { pattern: "f\\(", path: "m", type: "py" })
      expect(py).toBe("m/a.py:1:def f(")
      expect(pyWalk).toBe(py)
      const [make, makeWalk] = yield* both(root, { pattern: "needle", path: "m", type: "make", "-i": true })
      expect(make).toBe("m/Makefile:2:\tNEEDLE")
      expect(makeWalk).toBe(make)
      // type and include together: both must hold (rg alone would OR them).
      const [and, andWalk] = yield* both(root, { pattern: "f", path: "m", type: "py", include: "*.ts" })
      expect(and).toContain("No matches")
      expect(andWalk).toBe(and)
      const unknown = yield* runFailure(GrepTool, { pattern: "x", type: "pyton" }, makeCtx(root))
      expect(unknown).toContain('Unknown file type "pyton"')
      expect(unknown).toContain("py, ")
    }).pipe(Effect.provide(nodeLayer))
  )

  it("every glob of the type table compiles", () => {
    for (const [type, globs] of Object.entries(FILE_TYPES)) {
      for (const g of globs) expect([type, g, isRefusal(compileModelGlob(g) as object)]).toEqual([type, g, false])
    }
  })

  it.live(
    "differential: random trees and option sets print the same on rg and the walk (seeded)",
    () =>
      Effect.gen(function* () {
        const random = prng(31)
        const pick = <A>(xs: ReadonlyArray<A>): A => xs[Math.floor(random() * xs.length)]!
        const words = ["foo", "Foo", "bar", "BAR", "baz", "", "  x = foo(bar)", "é ü", "end", "foo bar"]
        const names = ["a.ts", "b.py", "c.md", "d.txt", "Makefile", "e.js", "f.rs"]
        const patterns = ["foo", "bar", "fo+", "^$", "ba[rz]", "foo.*bar", "foo\\n", "x\\s*=", "^end$", "é", "o\\nb"]
        let answered = 0
        for (let round = 0; round < 4; round++) {
          const root = yield* makeFixture
          const tree: Record<string, string> = {}
          for (let f = 0; f < 8; f++) {
            const lines = Array.from({ length: 1 + Math.floor(random() * 25) }, () => pick(words))
            const eol = random() < 0.2 ? "\r\n" : "\n"
            tree[`r/${pick(["", "s/", "s/t/", ".h/"])}${f}${pick(names)}`] =
              lines.join(eol) + (random() < 0.8 ? eol : "")
          }
          yield* writeTree(root, tree)
          for (let q = 0; q < 12; q++) {
            const multiline = random() < 0.3
            const pattern = pick(patterns.filter((p) => multiline || !p.includes("\\n")))
            const args: Record<string, unknown> = { pattern, path: "r" }
            if (multiline) args.multiline = true
            if (random() < 0.3) args["-i"] = true
            const mode = pick(["content", "content", "files_with_matches", "count", undefined])
            if (mode !== undefined) args.output_mode = mode
            for (const flag of ["-A", "-B", "-C"]) if (random() < 0.25) args[flag] = Math.floor(random() * 4)
            if (random() < 0.2) args.type = pick(["ts", "py", "make", "md", "js", "rust"])
            if (random() < 0.15) args.include = pick(["*.ts", "*.{py,md}", "[a-c]*"])
            if (random() < 0.3) args.head_limit = 1 + Math.floor(random() * 6)
            if (random() < 0.2) args.offset = Math.floor(random() * 4)
            const [rg, walk] = yield* both(root, args)
            expect({ args, walk }).toEqual({ args, walk: rg })
            if (!rg.startsWith("No matches") && !rg.startsWith("FAILED")) answered++
          }
        }
        // Most questions found something: the comparison is not of two empty answers.
        expect(answered).toBeGreaterThan(25)
      }).pipe(Effect.provide(nodeLayer)),
    120_000
  )
})
