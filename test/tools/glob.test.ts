import { describe, expect, it } from "@effect/vitest"
import { Effect, FileSystem } from "effect"
import { compileGlob, firstSorted, GlobTool } from "../../src/tools/glob.ts"
import { CurrentSearchBackend } from "../../src/tools/search/auto.ts"
import { walkBackend } from "../../src/tools/search/walk.ts"
import { nodeLayer } from "../fs/layers.ts"
import { makeCtx, makeFixture, run, runFailure, writeTree } from "./helpers.ts"

describe("glob", () => {
  it.live("normalizes ./, a leading / and absolute patterns inside the search path", () =>
    Effect.gen(function* () {
      const root = yield* makeFixture
      const ctx = makeCtx(root)
      for (const pattern of ["./src/*.ts", "/src/*.ts", `${root}/src/*.ts`]) {
        const out = yield* run(GlobTool, { pattern }, ctx)
        expect(out.output).toBe("src/a.ts")
      }
      // relative to path, output relative to the root
      const inSrc = yield* run(GlobTool, { pattern: "sub/**/*.ts", path: "src" }, ctx)
      expect(inSrc.output).toBe("src/sub/deep/c.ts")
    }).pipe(Effect.provide(nodeLayer))
  )

  it.live("a pattern naming an ignored directory searches it (naming it is explicit)", () =>
    Effect.gen(function* () {
      const root = yield* makeFixture
      const out = yield* run(GlobTool, { pattern: "node_modules/**/*.js" }, makeCtx(root))
      expect(out.output).toBe("node_modules/pkg/index.js")
      const everywhere = yield* run(GlobTool, { pattern: "**/*.js" }, makeCtx(root))
      expect(everywhere.output).toBe("src/build/keep.js")
    }).pipe(Effect.provide(nodeLayer))
  )

  it.live("caps at 1,000 paths sorted by path, and says how many more matched", () =>
    Effect.gen(function* () {
      const fs = yield* FileSystem.FileSystem
      const root = yield* fs.makeTempDirectoryScoped({ prefix: "freecode-glob-" })
      const tree: Record<string, string> = {}
      for (let i = 0; i < 1200; i++) tree[`d${i % 3}/f${String(i).padStart(4, "0")}.txt`] = ""
      yield* writeTree(root, tree)
      for (const backend of ["auto", "walk"] as const) {
        const call = run(GlobTool, { pattern: "*.txt" }, makeCtx(root))
        const out = yield* backend === "walk"
          ? call.pipe(Effect.provideService(CurrentSearchBackend, walkBackend))
          : call
        const lines = out.output.split("\n")
        expect(lines).toHaveLength(1001)
        expect(lines[0]).toBe("d0/f0000.txt")
        expect(lines[399]).toBe("d0/f1197.txt")
        expect(lines[400]).toBe("d1/f0001.txt")
        expect(lines[1000]).toBe("(Showing 1000 of 1200 matching files. 200 more matched; narrow the pattern or path.)")
        expect(out.metadata).toMatchObject({ count: 1200, shown: 1000, truncated: true })
      }
    }).pipe(Effect.provide(nodeLayer))
  )

  it.live("refuses a file as path and names similar directories for a missing one", () =>
    Effect.gen(function* () {
      const root = yield* makeFixture
      const ctx = makeCtx(root)
      expect(yield* runFailure(GlobTool, { pattern: "*", path: "src/a.ts" }, ctx)).toContain(
        "src/a.ts is a file, not a directory"
      )
      expect(yield* runFailure(GlobTool, { pattern: "*", path: "dcos" }, ctx)).toBe(
        "Directory not found: dcos. Did you mean docs?"
      )
    }).pipe(Effect.provide(nodeLayer))
  )

  it.live("no match in a missing literal directory is an ok result", () =>
    Effect.gen(function* () {
      const root = yield* makeFixture
      yield* writeTree(root, { "x/y.ts": "" })
      const out = yield* run(GlobTool, { pattern: "nope/**/*.ts" }, makeCtx(root))
      expect(out.output).toBe('No files match "nope/**/*.ts" in ./.')
    }).pipe(Effect.provide(nodeLayer))
  )

  it("compileGlob: no slash matches names at any depth, a slash anchors at the search path", () => {
    const names = compileGlob("*.ts", "/p")
    expect(names.matches("a.ts")).toBe(true)
    expect(names.matches("x/y/.a.ts")).toBe(true)
    expect(names.base).toBe("")
    const anchored = compileGlob("src/**/test_*.py", "/p")
    expect(anchored.matches("src/test_a.py")).toBe(true)
    expect(anchored.matches("src/x/test_a.py")).toBe(true)
    expect(anchored.matches("lib/src/test_a.py")).toBe(false)
    expect(anchored.base).toBe("src")
    expect(compileGlob("a/b/c.ts", "/p").base).toBe("a/b")
    expect(compileGlob("**/*.ts", "/p").base).toBe("")
  })

  it("declares a safe, cancellable, retryable search", () => {
    expect(GlobTool).toMatchObject({
      id: "glob",
      concurrencySafe: true,
      retrySafe: true,
      interruptBehavior: "cancel",
      operations: ["file.search"]
    })
  })
})

describe("firstSorted", () => {
  it("gives exactly the first k of a full code-unit sort, duplicates and all", () => {
    let seed = 7
    const random = () => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31
      return seed / 2 ** 31
    }
    const names = ["a", "B", "é", "src/a.ts", "src/A.ts", "src/b/c.ts", "z", "😀", "src/a.tsx", ""]
    for (const size of [0, 1, 2, 5, 50, 999, 1000, 1001, 3000]) {
      const paths = Array.from({ length: size }, () => {
        const base = names[Math.floor(random() * names.length)]!
        return random() < 0.3 ? base : `${base}/${Math.floor(random() * 500)}`
      })
      for (const k of [1, 10, 1000]) {
        const expected = [...paths].sort().slice(0, k)
        expect(firstSorted([...paths], k)).toEqual(expected)
      }
    }
  })
})
