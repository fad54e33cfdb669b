/**
 * What a search may reach and how it pages, through both backends (rg and the TypeScript
 * walk): dependency/build folders no .gitignore names are skipped and said so (and a project's
 * own rule, or naming one in path, still decides); a glob pattern cannot lead out of its path
 * or the project; grep's offset pages through every match exactly once.
 */
import * as NodeFs from "node:fs"
import { describe, expect, it } from "@effect/vitest"
import { Effect, FileSystem } from "effect"
import fc from "fast-check"
import { joinPath } from "../../src/path/path.ts"
import { GlobTool } from "../../src/tools/glob.ts"
import { GrepTool } from "../../src/tools/grep.ts"
import { LsTool } from "../../src/tools/ls.ts"
import { CurrentSearchBackend } from "../../src/tools/search/auto.ts"
import type { SearchBackend } from "../../src/tools/search/backend.ts"
import { loadRipgrepPath, makeRipgrepBackend } from "../../src/tools/search/ripgrep.ts"
import { walkBackend } from "../../src/tools/search/walk.ts"
import { nodeLayer } from "../fs/layers.ts"
import { makeCtx, run, runFailure, writeTree } from "./helpers.ts"

const backends: ReadonlyArray<readonly [string, Effect.Effect<SearchBackend, unknown>]> = [
  ["ripgrep", Effect.map(loadRipgrepPath, makeRipgrepBackend)],
  ["walk", Effect.succeed(walkBackend)]
]

const project = (tree: Readonly<Record<string, string | null>>) =>
  Effect.gen(function* () {
    const fs = yield* FileSystem.FileSystem
    const root = yield* fs.realPath(yield* fs.makeTempDirectoryScoped({ prefix: "freecode-scope-" }))
    yield* writeTree(root, tree)
    return root
  })

const FRESH = {
  "package.json": '{"name":"x"}\n',
  "index.js": "require('dep') // needle\n",
  "node_modules/dep/index.js": "module.exports = 'needle'\n",
  "node_modules/dep/lib/a.js": "needle\n",
  ".venv/lib/site.py": "needle = 1\n",
  "packages/p/node_modules/q/index.js": "needle\n",
  "packages/p/src/b.js": "needle\n"
}

describe.each(backends)("search scope (%s)", (_name, makeBackend) => {
  const withBackend = <A, E, R>(effect: (backend: SearchBackend) => Effect.Effect<A, E, R>) =>
    Effect.flatMap(makeBackend, (backend) => effect(backend).pipe(Effect.provideService(CurrentSearchBackend, backend)))

  it.live("with no .gitignore, node_modules and .venv are skipped by glob, grep and ls, and a line says so", () =>
    withBackend(() =>
      Effect.gen(function* () {
        const root = yield* project(FRESH)
        const ctx = makeCtx(root)
        const glob = yield* run(GlobTool, { pattern: "**/*.js" }, ctx)
        expect(glob.output.split("\n").filter((l) => !l.startsWith("("))).toEqual(["index.js", "packages/p/src/b.js"])
        expect(glob.output).toMatch(
          /\(Skipped .*node_modules\/.*no \.gitignore names\. To include one, pass it as path/
        )
        const grep = yield* run(GrepTool, { pattern: "needle" }, ctx)
        expect(grep.output.split("\n").filter((l) => !l.startsWith("("))).toEqual([
          "index.js:1:require('dep') // needle",
          "packages/p/src/b.js:1:needle"
        ])
        expect(grep.output).toContain("(Skipped ")
        const ls = yield* run(LsTool, {}, ctx)
        expect(ls.output).not.toContain("dep/")
        // ls walks itself: it names every folder it skipped, the nested one too.
        expect(ls.output).toContain(
          "(Skipped .venv/, node_modules/, packages/p/node_modules/: dependency/build folders that no .gitignore names."
        )
        expect(ls.metadata).toMatchObject({ skipped: 3 })
      }).pipe(Effect.provide(nodeLayer))
    )
  )

  it.live("a folder named in path is searched; a .gitignore that ignores one adds no line; `!` re-includes", () =>
    withBackend(() =>
      Effect.gen(function* () {
        const root = yield* project({ ...FRESH, ".gitignore": "node_modules/\n!.venv/\n" })
        const ctx = makeCtx(root)
        const inside = yield* run(GlobTool, { pattern: "**/*.js", path: "node_modules" }, ctx)
        expect(inside.output).toBe("node_modules/dep/index.js\nnode_modules/dep/lib/a.js")
        const grep = yield* run(GrepTool, { pattern: "needle" }, ctx)
        expect(grep.output).toContain(".venv/lib/site.py:1:needle = 1")
        expect(grep.output).not.toContain("node_modules")
        expect(grep.output).not.toContain("(Skipped")
      }).pipe(Effect.provide(nodeLayer))
    )
  )

  it.live("a glob pattern cannot lead out of its path and the project: .., a link out; a link inside is fine", () =>
    withBackend(() =>
      Effect.gen(function* () {
        const root = yield* project({ "proj/src/a.ts": "a\n", "proj/lib/b.ts": "b\n", "outside/secret.ts": "s\n" })
        const proj = joinPath(root, "proj")
        NodeFs.symlinkSync(joinPath(root, "outside"), joinPath(proj, "ld"))
        NodeFs.symlinkSync(joinPath(proj, "lib"), joinPath(proj, "src", "shared"))
        const ctx = makeCtx(proj)
        for (const pattern of ["ld/*", "ld/**/*.ts", "../outside/*", "src/../../outside/*.ts", "../../../../../../*"]) {
          const message = yield* runFailure(GlobTool, { pattern }, ctx)
          expect(message).toMatch(/leads out of \.\/ \(to .*\): glob lists only what is inside its path/)
          expect(message).not.toContain("secret.ts")
        }
        // A link that stays in the project leads somewhere the project may read.
        const shared = yield* run(GlobTool, { pattern: "shared/*.ts", path: "src" }, ctx)
        expect(shared.output).toBe("src/shared/b.ts")
      }).pipe(Effect.provide(nodeLayer))
    )
  )

  it.live(
    "grep pages: every page's offset is the one the page before named, and together they are the whole list",
    () =>
      withBackend(() =>
        Effect.gen(function* () {
          const tree: Record<string, string> = {}
          for (let f = 0; f < 7; f++)
            tree[`f${f}.txt`] = Array.from({ length: 9 }, (_, i) => `hit ${f}.${i}`).join("\n")
          const root = yield* project(tree)
          const ctx = makeCtx(root)
          const all = yield* run(GrepTool, { pattern: "hit", head_limit: 1000 }, ctx)
          const everything = all.output.split("\n")
          expect(everything).toHaveLength(63)
          // Seeded and small: a few page sizes, each walked to the end by the offsets the tool names.
          yield* Effect.promise(() =>
            fc.assert(
              fc.asyncProperty(fc.integer({ min: 1, max: 70 }), async (size) => {
                const seen: Array<string> = []
                let offset: number | undefined = 0
                while (offset !== undefined) {
                  const page = await Effect.runPromise(
                    run(GrepTool, { pattern: "hit", head_limit: size, ...(offset === 0 ? {} : { offset }) }, ctx).pipe(
                      Effect.provide(nodeLayer),
                      Effect.provideService(CurrentSearchBackend, walkBackend)
                    )
                  )
                  seen.push(...page.output.split("\n").filter((l) => !l.startsWith("(")))
                  const next = page.metadata?.nextOffset as number | undefined
                  if (next !== undefined) expect(page.output).toContain(`Next page: offset=${next}`)
                  offset = next
                }
                expect(seen).toEqual(everything)
              }),
              { seed: 16, numRuns: 8 }
            )
          )
          const past = yield* runFailure(GrepTool, { pattern: "hit", offset: 63 }, ctx)
          expect(past).toContain("offset 63 is past the last match")
          const last = yield* run(GrepTool, { pattern: "hit", offset: 60 }, ctx)
          expect(last.output.split("\n").at(-1)).toBe(
            "(Showing lines 61-63 of 63 matching lines in 7 files: the last page.)"
          )
        }).pipe(Effect.provide(nodeLayer))
      )
  )
})
