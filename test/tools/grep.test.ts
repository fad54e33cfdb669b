import { describe, expect, it } from "@effect/vitest"
import { Effect, Result } from "effect"
import { GrepTool } from "../../src/tools/grep.ts"
import { CurrentSearchBackend } from "../../src/tools/search/auto.ts"
import { walkBackend } from "../../src/tools/search/walk.ts"
import { nodeLayer } from "../fs/layers.ts"
import { makeCtx, makeFixture, run, runFailure, writeTree } from "./helpers.ts"

describe("grep", () => {
  it.live("keeps the first head_limit lines in sorted order across many files (both backends)", () =>
    Effect.gen(function* () {
      const root = yield* makeFixture
      const tree: Record<string, string> = {}
      for (let i = 0; i < 40; i++) tree[`many/f${String(i).padStart(2, "0")}.txt`] = "hit\nmiss\nhit\n".repeat(50)
      yield* writeTree(root, tree)
      for (const useWalk of [false, true]) {
        const call = run(GrepTool, { pattern: "^hit$", path: "many", head_limit: 5 }, makeCtx(root))
        const out = yield* useWalk ? call.pipe(Effect.provideService(CurrentSearchBackend, walkBackend)) : call
        expect(out.output.split("\n")).toEqual([
          "many/f00.txt:1:hit",
          "many/f00.txt:3:hit",
          "many/f00.txt:4:hit",
          "many/f00.txt:6:hit",
          "many/f00.txt:7:hit",
          "(Showing 5 of 4000 matching lines in 40 files; 3995 more. Next page: offset=5, head_limit=5; or narrow with a more specific pattern, path or include.)"
        ])
      }
    }).pipe(Effect.provide(nodeLayer))
  )

  it.live("default head_limit is 250", () =>
    Effect.gen(function* () {
      const root = yield* makeFixture
      yield* writeTree(root, { "lots.txt": "x\n".repeat(300) })
      const out = yield* run(GrepTool, { pattern: "x", path: "lots.txt" }, makeCtx(root))
      const lines = out.output.split("\n")
      expect(lines).toHaveLength(251)
      expect(lines[249]).toBe("lots.txt:250:x")
      expect(lines[250]).toContain("Showing 250 of 300 matching lines in 1 file; 50 more. Next page: offset=250;")
    }).pipe(Effect.provide(nodeLayer))
  )

  it.live(
    "a single file path searches that file even if .gitignore hides it; a binary one is skipped with a note",
    () =>
      Effect.gen(function* () {
        const root = yield* makeFixture
        const ctx = makeCtx(root)
        const ignored = yield* run(GrepTool, { pattern: "needle", path: "logs/a.log" }, ctx)
        expect(ignored.output).toBe("logs/a.log:1:needle log")
        const binary = yield* run(GrepTool, { pattern: "needle", path: "src/bin.dat" }, ctx)
        expect(binary.output).toContain("src/bin.dat is a binary file and grep skips binary files")
      }).pipe(Effect.provide(nodeLayer))
  )

  it.live("patterns starting with - are patterns, not flags", () =>
    Effect.gen(function* () {
      const root = yield* makeFixture
      yield* writeTree(root, { "flags.txt": "use --hidden here\n" })
      const out = yield* run(GrepTool, { pattern: "--hidden" }, makeCtx(root))
      expect(out.output).toBe("flags.txt:1:use --hidden here")
    }).pipe(Effect.provide(nodeLayer))
  )

  it.live("include with a directory part, or a missing path, are errors that say what to do", () =>
    Effect.gen(function* () {
      const root = yield* makeFixture
      const ctx = makeCtx(root)
      expect(yield* runFailure(GrepTool, { pattern: "x", include: "src/*.ts" }, ctx)).toContain(
        "include matches file names only"
      )
      expect(yield* runFailure(GrepTool, { pattern: "x", include: "*.{ts" }, ctx)).toContain(
        'Invalid include glob "*.{ts": unbalanced'
      )
      expect(yield* runFailure(GrepTool, { pattern: "x", path: "scr" }, ctx)).toBe(
        "Path not found: scr. Did you mean src?"
      )
    }).pipe(Effect.provide(nodeLayer))
  )

  it.live("an invalid regex quotes rg's error", () =>
    Effect.gen(function* () {
      const root = yield* makeFixture
      const message = yield* runFailure(GrepTool, { pattern: "a[b" }, makeCtx(root))
      expect(message).toContain('Invalid regex "a[b"')
      expect(message).toContain("regex parse error")
      expect(message).toContain("unclosed character class")
    }).pipe(Effect.provide(nodeLayer))
  )

  it("rejects head_limit 0 at decode time", () => {
    expect(Result.isFailure(GrepTool.decode({ pattern: "x", head_limit: 0 }))).toBe(true)
    expect(Result.isFailure(GrepTool.decode({ pattern: "" }))).toBe(true)
  })

  it("declares a safe, cancellable, retryable search", () => {
    expect(GrepTool).toMatchObject({
      id: "grep",
      concurrencySafe: true,
      retrySafe: true,
      interruptBehavior: "cancel",
      operations: ["file.search"]
    })
    expect(GrepTool.paths({ pattern: "x", path: "src" }, makeCtx("/proj"))).toEqual(["/proj/src"])
  })
})
