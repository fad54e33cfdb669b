/**
 * The same assertions against both search backends (rg and the TypeScript walk) on one
 * fixture tree: identical file lists for glob and ls, identical lines for grep.
 */
import { readFileSync } from "node:fs"
import { describe, expect, it } from "@effect/vitest"
import { Effect, FileSystem } from "effect"
import { joinPath } from "../../src/path/path.ts"
import { GlobTool } from "../../src/tools/glob.ts"
import { GrepTool } from "../../src/tools/grep.ts"
import { LsTool } from "../../src/tools/ls.ts"
import { CurrentSearchBackend, makeAutoBackend } from "../../src/tools/search/auto.ts"
import { RipgrepUnavailable, type SearchBackend } from "../../src/tools/search/backend.ts"
import { anchorLine } from "../../src/tools/search/ignore.ts"
import { loadRipgrepPath, makeRipgrepBackend } from "../../src/tools/search/ripgrep.ts"
import { walkBackend } from "../../src/tools/search/walk.ts"
import { nodeLayer } from "../fs/layers.ts"
import { FIXTURE_FILES, makeCtx, makeFixture, run, runFailure, writeTree } from "./helpers.ts"

const rgBackend = Effect.map(loadRipgrepPath, makeRipgrepBackend)

const backends: ReadonlyArray<readonly [string, Effect.Effect<SearchBackend, RipgrepUnavailable>]> = [
  ["ripgrep", rgBackend],
  ["walk", Effect.succeed(walkBackend)]
]

/** Backends list files in no particular order; compare them sorted. */
const relativeTo = (root: string, files: ReadonlyArray<string>) => files.map((f) => f.slice(root.length + 1)).sort()

/** Lines of an ls tree that are files, as root-relative paths (rebuilt from the indentation). */
const lsFiles = (output: string, prefix = ""): Array<string> => {
  const stack: Array<string> = []
  const files: Array<string> = []
  for (const line of output.split("\n").slice(1)) {
    const m = /^( +)(.*)$/.exec(line)
    if (m === null || m[2]?.startsWith("[+")) continue
    const depth = (m[1] as string).length / 2 - 1
    const name = (m[2] as string).replace(/ \[.*\]$/, "")
    stack.length = depth
    if (name.endsWith("/")) stack.push(name.slice(0, -1))
    else files.push(prefix + [...stack, name].join("/"))
  }
  return files.sort()
}

describe.each(backends)("search backend: %s", (name, makeBackend) => {
  it.live("lists the files .gitignore keeps: nested files, negation, hidden, no .git, rules stop at the root", () =>
    Effect.gen(function* () {
      const root = yield* makeFixture
      const backend = yield* makeBackend
      const listed = yield* backend.listFiles({ root, dir: root })
      expect(listed.backend).toBe(name)
      expect(relativeTo(root, listed.files)).toEqual(FIXTURE_FILES)
    }).pipe(Effect.provide(nodeLayer))
  )

  it.live("a name prefilter lists only matching names, and never brings back ignored files", () =>
    Effect.gen(function* () {
      const root = yield* makeFixture
      const backend = yield* makeBackend
      const logs = yield* backend.listFiles({ root, dir: root, nameGlob: "*.log" })
      expect(relativeTo(root, logs.files)).toEqual(FIXTURE_FILES.filter((f) => f.endsWith(".log")))
      const ts = yield* backend.listFiles({ root, dir: root, nameGlob: "*.{ts,tsx}" })
      expect(relativeTo(root, ts.files)).toEqual(FIXTURE_FILES.filter((f) => /\.tsx?$/.test(f)))
    }).pipe(Effect.provide(nodeLayer))
  )

  it.live("applies the ancestors' .gitignore files when listing a subdirectory", () =>
    Effect.gen(function* () {
      const root = yield* makeFixture
      const backend = yield* makeBackend
      const listed = yield* backend.listFiles({ root, dir: joinPath(root, "src/sub") })
      // src/.gitignore hides gen/, the root's *.log hides deep/d.log but !keep.log keeps keep.log,
      // src/sub/.gitignore hides x.tmp.
      expect(relativeTo(root, listed.files)).toEqual([
        "src/sub/.gitignore",
        "src/sub/deep/c.ts",
        "src/sub/keep.log",
        "src/sub/local.txt"
      ])
    }).pipe(Effect.provide(nodeLayer))
  )

  it.live("searches an explicitly named ignored directory", () =>
    Effect.gen(function* () {
      const root = yield* makeFixture
      const backend = yield* makeBackend
      const listed = yield* backend.listFiles({ root, dir: joinPath(root, "build") })
      expect(relativeTo(root, listed.files)).toEqual(["build/out.js"])
    }).pipe(Effect.provide(nodeLayer))
  )

  it.live("a deeper .gitignore re-includes a directory a shallower one ignores", () =>
    Effect.gen(function* () {
      const root = yield* makeFixture
      yield* writeTree(root, {
        "pkg/.gitignore": "!dist/\n",
        "pkg/dist/x.js": "x\n",
        "other/dist/y.js": "y\n",
        ".gitignore": "dist/\n"
      })
      const backend = yield* makeBackend
      const listed = yield* backend.listFiles({ root, dir: root })
      const rel = relativeTo(root, listed.files)
      expect(rel).toContain("pkg/dist/x.js")
      expect(rel).not.toContain("other/dist/y.js")
    }).pipe(Effect.provide(nodeLayer))
  )

  it.live("glob: same matches through the tool", () =>
    Effect.gen(function* () {
      const root = yield* makeFixture
      const backend = yield* makeBackend
      const ctx = makeCtx(root)
      const glob = (args: object) => run(GlobTool, args, ctx).pipe(Effect.provideService(CurrentSearchBackend, backend))

      const ts = yield* glob({ pattern: "**/*.ts" })
      expect(ts.output).toBe([".hidden/secret.ts", "src/a.ts", "src/sub/deep/c.ts"].join("\n"))
      expect(ts.metadata?.backend).toBe(name)

      const names = yield* glob({ pattern: "*.{ts,tsx}" })
      expect(names.output.split("\n")).toEqual([".hidden/secret.ts", "src/a.ts", "src/b.tsx", "src/sub/deep/c.ts"])

      const logs = yield* glob({ pattern: "*.log" })
      expect(logs.output.split("\n")).toEqual(["logs/keep.log", "src/sub/keep.log"])

      const anchored = yield* glob({ pattern: "src/**/*.txt" })
      expect(anchored.output).toBe("src/sub/local.txt")

      const inSub = yield* glob({ pattern: "**/*", path: "src/sub" })
      expect(inSub.output.split("\n")).toEqual([
        "src/sub/.gitignore",
        "src/sub/deep/c.ts",
        "src/sub/keep.log",
        "src/sub/local.txt"
      ])

      const none = yield* glob({ pattern: "**/*.rs" })
      expect(none.output).toBe('No files match "**/*.rs" in ./.')
      expect(none.metadata?.count).toBe(0)
    }).pipe(Effect.provide(nodeLayer))
  )

  it.live("grep: same lines through the tool, sorted, binary/ignored/.git skipped", () =>
    Effect.gen(function* () {
      const root = yield* makeFixture
      const backend = yield* makeBackend
      const ctx = makeCtx(root)
      const grep = (args: object) => run(GrepTool, args, ctx).pipe(Effect.provideService(CurrentSearchBackend, backend))

      const all = yield* grep({ pattern: "needle" })
      expect(all.output.split("\n")).toEqual([
        ".hidden/secret.ts:1:export const hidden = 'needle'",
        "README.md:1:# needle readme",
        "docs/guide.txt:1:the needle in docs",
        "logs/keep.log:1:needle keep",
        "src/a.ts:2:// needle here",
        "src/a.ts:4:needle again",
        "src/b.tsx:1:export const B = () => 'needle tsx'",
        "src/build/keep.js:1:needle src build",
        "src/sub/deep/c.ts:1:needle deep",
        "src/sub/keep.log:1:needle sub keep",
        "src/sub/local.txt:1:needle sub local"
      ])
      expect(all.metadata).toMatchObject({ matches: 11, files: 10, shown: 11, truncated: false, backend: name })

      const included = yield* grep({ pattern: "needle", include: "*.{ts,tsx}" })
      expect(included.output.split("\n")).toEqual([
        ".hidden/secret.ts:1:export const hidden = 'needle'",
        "src/a.ts:2:// needle here",
        "src/a.ts:4:needle again",
        "src/b.tsx:1:export const B = () => 'needle tsx'",
        "src/sub/deep/c.ts:1:needle deep"
      ])

      const sub = yield* grep({ pattern: "needle \\w+", path: "src/sub" })
      expect(sub.output.split("\n")).toEqual([
        "src/sub/deep/c.ts:1:needle deep",
        "src/sub/keep.log:1:needle sub keep",
        "src/sub/local.txt:1:needle sub local"
      ])

      const limited = yield* grep({ pattern: "needle", head_limit: 3 })
      expect(limited.output.split("\n")).toEqual([
        ".hidden/secret.ts:1:export const hidden = 'needle'",
        "README.md:1:# needle readme",
        "docs/guide.txt:1:the needle in docs",
        "(Showing 3 of 11 matching lines in 10 files; 8 more. Next page: offset=3, head_limit=3; or narrow with a more specific pattern, path or include.)"
      ])

      // look-around (rg picks PCRE2 for it) and a leading inline flag work in both
      const behind = yield* grep({ pattern: "(?<=// )needle" })
      expect(behind.output).toBe("src/a.ts:2:// needle here")
      const caseless = yield* grep({ pattern: "(?i)NEEDLE AGAIN" })
      expect(caseless.output).toBe("src/a.ts:4:needle again")

      const single = yield* grep({ pattern: "^needle", path: "src/a.ts" })
      expect(single.output).toBe("src/a.ts:4:needle again")

      const none = yield* grep({ pattern: "haystack" })
      expect(none.output).toBe('No matches for "haystack" in ./.')
      expect(none.metadata?.matches).toBe(0)

      const bad = yield* runFailure(GrepTool, { pattern: "foo(" }, ctx).pipe(
        Effect.provideService(CurrentSearchBackend, backend)
      )
      expect(bad).toContain('Invalid regex "foo("')
      expect(bad).toMatch(/unclosed group|missing closing \)/i)
      expect(bad).toContain("Escape regex metacharacters")
    }).pipe(Effect.provide(nodeLayer))
  )

  it.live("grep: long lines are cut to 500 chars with a marker; CRLF lines are shown without CR", () =>
    Effect.gen(function* () {
      const root = yield* makeFixture
      yield* writeTree(root, { "long/x.txt": `${"a".repeat(600)}needle${"b".repeat(100)}\nneedle crlf\r\n` })
      const backend = yield* makeBackend
      const out = yield* run(GrepTool, { pattern: "needle", path: "long" }, makeCtx(root)).pipe(
        Effect.provideService(CurrentSearchBackend, backend)
      )
      expect(out.output.split("\n")).toEqual([
        `long/x.txt:1:${"a".repeat(500)}… [206 chars cut]`,
        "long/x.txt:2:needle crlf"
      ])
    }).pipe(Effect.provide(nodeLayer))
  )

  it.live("ls lists the same files as the backend", () =>
    Effect.gen(function* () {
      const root = yield* makeFixture
      const backend = yield* makeBackend
      const listed = yield* backend.listFiles({ root, dir: root })
      const ls = yield* run(LsTool, {}, makeCtx(root))
      expect(lsFiles(ls.output)).toEqual(relativeTo(root, listed.files).sort())
    }).pipe(Effect.provide(nodeLayer))
  )
})

describe("backend choice", () => {
  it.live("the auto backend falls back to the walk for good once rg cannot be spawned", () =>
    Effect.gen(function* () {
      const root = yield* makeFixture
      let probes = 0
      const auto = makeAutoBackend({
        ripgrepPath: Effect.sync(() => {
          probes++
          return "/nonexistent/rg-binary"
        })
      })
      const first = yield* auto.listFiles({ root, dir: root })
      expect(first.backend).toBe("walk")
      expect(relativeTo(root, first.files)).toEqual(FIXTURE_FILES)
      const second = yield* auto.grep({ root, path: root, isFile: false, pattern: "needle deep", limit: 10 })
      expect(second.backend).toBe("walk")
      expect(second.matches.map((m) => `${m.path.slice(root.length + 1)}:${m.line}`)).toEqual(["src/sub/deep/c.ts:1"])
      expect(probes).toBe(1)
    }).pipe(Effect.provide(nodeLayer))
  )

  it.live("the auto backend falls back when the rg package is missing", () =>
    Effect.gen(function* () {
      const root = yield* makeFixture
      const auto = makeAutoBackend({ ripgrepPath: Effect.fail(new RipgrepUnavailable({ message: "no package" })) })
      const listed = yield* auto.listFiles({ root, dir: root })
      expect(listed.backend).toBe("walk")
    }).pipe(Effect.provide(nodeLayer))
  )

  it.live("the default auto backend uses rg when it is installed", () =>
    Effect.gen(function* () {
      const root = yield* makeFixture
      const listed = yield* makeAutoBackend().listFiles({ root, dir: root })
      expect(listed.backend).toBe("ripgrep")
    }).pipe(Effect.provide(nodeLayer))
  )
})

describe("ripgrep exit codes", () => {
  /** A stand-in rg (a real executable script) that prints `stdout`, `stderr` and exits with `code`. */
  const fakeRg = (dir: string, stdout: string, stderr: string, code: number) =>
    Effect.gen(function* () {
      const fs = yield* FileSystem.FileSystem
      const script = joinPath(dir, "fake-rg.sh")
      yield* fs.writeFileString(script, `#!/bin/sh\nprintf '${stdout}'\nprintf '${stderr}' >&2\nexit ${code}\n`)
      yield* fs.chmod(script, 0o755)
      return makeRipgrepBackend(script)
    })

  it.live("exit 2 with output is a success with a note about what could not be read", () =>
    Effect.gen(function* () {
      const root = yield* makeFixture
      const rg = yield* fakeRg(
        root,
        "src/a.ts\\0002:// needle here\\n",
        "rg: ./locked: Permission denied (os error 13)\\n",
        2
      )
      const result = yield* rg.grep({ root, path: root, isFile: false, pattern: "needle", limit: 10 })
      expect(result.matches).toEqual([{ path: joinPath(root, "src/a.ts"), line: 2, text: "// needle here" }])
      expect(result.notes).toEqual([
        "Some files or directories could not be read and were skipped: rg: ./locked: Permission denied (os error 13)"
      ])
    }).pipe(Effect.provide(nodeLayer))
  )

  it.live("exit 2 without output is an error quoting rg", () =>
    Effect.gen(function* () {
      const root = yield* makeFixture
      const rg = yield* fakeRg(root, "", "rg: something broke\\n", 2)
      const error = yield* Effect.flip(rg.grep({ root, path: root, isFile: false, pattern: "x", limit: 10 }))
      expect(error).toMatchObject({ _tag: "SearchFailed", message: "rg failed: rg: something broke" })
    }).pipe(Effect.provide(nodeLayer))
  )

  it.live("an interrupted search kills rg", () =>
    Effect.gen(function* () {
      const root = yield* makeFixture
      const fs = yield* FileSystem.FileSystem
      const pidFile = joinPath(root, "rg.pid")
      const script = joinPath(root, "slow-rg.sh")
      yield* fs.writeFileString(script, `#!/bin/sh\necho $$ > ${pidFile}\nexec sleep 30\n`)
      yield* fs.chmod(script, 0o755)
      const rg = makeRipgrepBackend(script)
      const result = yield* rg
        .grep({ root, path: root, isFile: false, pattern: "x", limit: 10 })
        .pipe(Effect.timeout("1500 millis"), Effect.flip)
      expect(result._tag).toBe("TimeoutError")
      const pid = Number((yield* fs.readFileString(pidFile)).trim())
      let alive = true
      for (let i = 0; i < 30 && alive; i++) {
        try {
          process.kill(pid, 0)
          alive = !readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.startsWith("Z")
        } catch {
          alive = false
        }
        if (alive) yield* Effect.sleep("100 millis")
      }
      expect(alive).toBe(false)
    }).pipe(Effect.provide(nodeLayer))
  )

  it.live("a missing project root does not retire rg", () =>
    Effect.gen(function* () {
      const rg = yield* rgBackend
      const error = yield* Effect.flip(rg.listFiles({ root: "/nonexistent/root", dir: "/nonexistent/root" }))
      expect(error._tag).toBe("SearchFailed")
    }).pipe(Effect.provide(nodeLayer))
  )
})

describe("anchorLine (ancestor rules for rg)", () => {
  it("re-anchors a subdirectory's rules at the root", () => {
    expect(anchorLine("gen/", "src")).toBe("/src/**/gen/")
    expect(anchorLine("/local.txt", "src")).toBe("/src/local.txt")
    expect(anchorLine("a/b", "src/x")).toBe("/src/x/a/b")
    expect(anchorLine("!keep.log", "src")).toBe("!/src/**/keep.log")
    expect(anchorLine("*.log   ", "src")).toBe("/src/**/*.log")
    expect(anchorLine("# comment", "src")).toBeUndefined()
    expect(anchorLine("", "src")).toBeUndefined()
    expect(anchorLine("x", "we[ir]d")).toBe("/we\\[ir\\]d/**/x")
    expect(anchorLine("/build", "")).toBe("/build")
  })
})
