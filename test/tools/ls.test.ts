import { describe, expect, it } from "@effect/vitest"
import { Effect, FileSystem } from "effect"
import { joinPath } from "../../src/path/path.ts"
import { LsTool } from "../../src/tools/ls.ts"
import { nodeLayer } from "../fs/layers.ts"
import { makeCtx, makeFixture, run, runFailure, writeTree } from "./helpers.ts"

describe("ls", () => {
  it.live(
    "renders the tree: dirs first then files, by name; .gitignore respected; hidden shown; .git never; empty dirs shown",
    () =>
      Effect.gen(function* () {
        const root = yield* makeFixture
        const out = yield* run(LsTool, {}, makeCtx(root))
        expect(out.output).toBe(
          [
            "./",
            "  .hidden/",
            "    secret.ts",
            "  docs/",
            "    guide.txt",
            "  empty/",
            "  logs/",
            "    keep.log",
            "  src/",
            "    build/",
            "      keep.js",
            "    sub/",
            "      deep/",
            "        c.ts",
            "      .gitignore",
            "      keep.log",
            "      local.txt",
            "    .gitignore",
            "    a.ts",
            "    b.tsx",
            "    bin.dat",
            "  .gitignore",
            "  README.md"
          ].join("\n")
        )
        expect(out.metadata).toMatchObject({ path: root, entries: 22, shown: 22, truncated: false })
      }).pipe(Effect.provide(nodeLayer))
  )

  it.live("lists a subdirectory with its ancestors' rules, and skips extra ignore patterns", () =>
    Effect.gen(function* () {
      const root = yield* makeFixture
      const ctx = makeCtx(root)
      const sub = yield* run(LsTool, { path: "src/sub" }, ctx)
      expect(sub.output).toBe(
        ["src/sub/", "  deep/", "    c.ts", "  .gitignore", "  keep.log", "  local.txt"].join("\n")
      )
      const ignored = yield* run(LsTool, { path: "src", ignore: ["*.ts", "build/", "sub/deep"] }, ctx)
      expect(ignored.output).toBe(
        [
          "src/",
          "  sub/",
          "    .gitignore",
          "    keep.log",
          "    local.txt",
          "  .gitignore",
          "  b.tsx",
          "  bin.dat"
        ].join("\n")
      )
    }).pipe(Effect.provide(nodeLayer))
  )

  it.live("says when a directory is empty, and shows symbolic links with their target", () =>
    Effect.gen(function* () {
      const root = yield* makeFixture
      const fs = yield* FileSystem.FileSystem
      const ctx = makeCtx(root)
      const empty = yield* run(LsTool, { path: "empty" }, ctx)
      expect(empty.output).toBe("empty/\n(empty directory)")
      yield* fs.symlink("../src/a.ts", joinPath(root, "docs/link.ts"))
      const docs = yield* run(LsTool, { path: "docs" }, ctx)
      expect(docs.output).toBe("docs/\n  guide.txt\n  link.ts -> ../src/a.ts")
    }).pipe(Effect.provide(nodeLayer))
  )

  it.live("leaves out what the rules hide, a hidden directory with everything below it", () =>
    Effect.gen(function* () {
      const root = yield* makeFixture
      const hidden = new Set([joinPath(root, "src/build"), joinPath(root, "src/a.ts"), joinPath(root, "docs")])
      const ctx = { ...makeCtx(root), searchable: (abs: string) => (hidden.has(abs) ? "denied" : "ok") } as const
      const src = yield* run(LsTool, { path: "src" }, ctx)
      expect(src.output).toBe(
        [
          "src/",
          "  sub/",
          "    deep/",
          "      c.ts",
          "    .gitignore",
          "    keep.log",
          "    local.txt",
          "  .gitignore",
          "  b.tsx",
          "  bin.dat",
          "(2 entries are not shown: the project's permission rules keep them from you (a deny rule, or a .env-like file that needs approval to read).)"
        ].join("\n")
      )
      // The walk went below src/build: nothing there is counted, or offered as "the rest".
      expect(src.metadata).toMatchObject({ entries: 9, shown: 9, truncated: false })
      const top = yield* run(LsTool, {}, ctx)
      expect(top.output.split("\n").slice(0, 4)).toEqual(["./", "  .hidden/", "    secret.ts", "  empty/"])
      expect(top.output).not.toContain("guide.txt")
    }).pipe(Effect.provide(nodeLayer))
  )

  it.live("caps the tree at 1,000 entries, top levels first, and says how many more and how to narrow", () =>
    Effect.gen(function* () {
      const fs = yield* FileSystem.FileSystem
      const root = yield* fs.makeTempDirectoryScoped({ prefix: "freecode-ls-" })
      const tree: Record<string, string> = {}
      for (let i = 0; i < 800; i++) tree[`f${String(i).padStart(4, "0")}.txt`] = ""
      for (let i = 0; i < 300; i++) tree[`deep/g${String(i).padStart(4, "0")}.txt`] = ""
      yield* writeTree(root, tree)
      const out = yield* run(LsTool, {}, makeCtx(root))
      const lines = out.output.split("\n")
      // header + 1000 entries + footer
      expect(lines).toHaveLength(1002)
      expect(lines[1]).toBe("  deep/ [+101 not shown]")
      expect(lines[2]).toBe("    g0000.txt")
      expect(lines[200]).toBe("    g0198.txt")
      expect(lines[201]).toBe("  f0000.txt")
      expect(lines[1000]).toBe("  f0799.txt")
      expect(lines[1001]).toBe("(Showing 1000 of 1101 entries. Pass a deeper path or ignore patterns to see the rest.)")
      expect(out.metadata).toMatchObject({ entries: 1101, shown: 1000, truncated: true })
    }).pipe(Effect.provide(nodeLayer))
  )

  it.live("refuses a file and names similar directories for a missing path", () =>
    Effect.gen(function* () {
      const root = yield* makeFixture
      const ctx = makeCtx(root)
      expect(yield* runFailure(LsTool, { path: "src/a.ts" }, ctx)).toBe(
        "src/a.ts is not a directory; use read to see a file."
      )
      expect(yield* runFailure(LsTool, { path: "srcs" }, ctx)).toBe("Directory not found: srcs. Did you mean src?")
    }).pipe(Effect.provide(nodeLayer))
  )

  it("declares a safe, cancellable, retryable read", () => {
    expect(LsTool).toMatchObject({
      id: "ls",
      concurrencySafe: true,
      retrySafe: true,
      interruptBehavior: "cancel",
      operations: ["file.read"]
    })
    expect(LsTool.paths({}, makeCtx("/proj"))).toEqual(["/proj"])
  })
})
