/**
 * `glob`: files whose path matches a glob, .gitignore respected, hidden files included, `.git`
 * never, sorted by path, at most 1,000.
 *
 * The pattern is gitignore-style, as rg's `-g` reads it: without a `/` it matches the file name
 * at any depth (`*.ts`); with one it is anchored at the search path (`src/**\/test_*.py`,
 * `**\/*.ts`). A leading `./` or `/` is dropped, and an absolute pattern inside the search path
 * is made relative. Matching (picomatch's syntax, `dot: true`, run in linear time by
 * src/text/glob.ts; a negated extglob `!(…)` is refused) is done on the file list of the search
 * backend, never by rg's `-g` (which would override .gitignore). The pattern's literal leading
 * directories (`src/` in `src/**\/*.ts`) narrow the walk; naming a directory explicitly
 * searches it even if .gitignore hides it (e.g. `node_modules/foo/**\/*.d.ts`).
 *
 * Output paths are relative to the project root (absolute when outside it), one per line.
 */

import { Effect, FileSystem, Schema } from "effect"
import picomatch from "picomatch"
import { LocalFs } from "../fs/local-fs.ts"
import { displayDir, displayPath, isInside, joinPath, relativeInside, resolvePath } from "../path/path.ts"
import { compileModelGlob } from "../text/glob.ts"
import { plural } from "../text/plural.ts"
import { isRefusal } from "../text/regex.ts"
import { fail } from "../tool/errors.ts"
import { searchesBelow } from "../tool/presets.ts"
import { readableError } from "../tool/readable-error.ts"
import { defineTool } from "../tool/tool.ts"
import { statOrFail } from "./failures/fs.ts"
import { CurrentSearchBackend } from "./search/auto.ts"
import { skippedNote } from "./search/default-skip.ts"
import { DENIED, hiddenFrom, hiddenNote } from "./search/visibility.ts"

export const MAX_GLOB_RESULTS = 1000

const Parameters = Schema.Struct({
  pattern: Schema.String.check(Schema.isMinLength(1)).annotate({
    description:
      "Glob, gitignore-style: without a / it matches file names at any depth (`*.ts`), with one it is relative to path (`src/**/test_*.py`)."
  }),
  path: Schema.optionalKey(
    Schema.String.annotate({
      description: "Directory to search, absolute or relative to the project root (default: the project root)."
    })
  )
})

export interface CompiledGlob {
  /** The pattern as matched, relative to the search directory. */
  readonly pattern: string
  /** Directory (relative to the search directory, "" for itself) that holds every match. */
  readonly base: string
  readonly matches: (relativePath: string) => boolean
  /**
   * The pattern's last segment when it constrains the file name in a way rg and picomatch read
   * alike (`*.ts`, `test_*.{py,pyi}`): the backend lists only such files. Undefined otherwise.
   */
  readonly nameGlob: string | undefined
}

/** Directory names picomatch reads as themselves (no `.` or `..` segment): `src/lib`, `.github`. */
const PLAIN_DIRS = /^(?!\.\.?(\/|$))[\w.-]+(\/(?!\.\.?(\/|$))[\w.-]+)*$/

/** Plain names with `*`, `?` and `{a,b}` only: no classes, extglobs, escapes or globstars. */
const SIMPLE_NAME_GLOB = /^[\w.\-*?{},]+$/

const nameGlobOf = (pattern: string): string | undefined => {
  const last = pattern.slice(pattern.lastIndexOf("/") + 1)
  if (!SIMPLE_NAME_GLOB.test(last) || last.includes("**") || last === "*") return undefined
  const opens = (last.match(/\{/g) ?? []).length
  return opens === (last.match(/\}/g) ?? []).length && !/\{[^}]*\{/.test(last) ? last : undefined
}

/** Normalizes and compiles a glob pattern for paths relative to `dir`. */
export const compileGlob = (input: string, dir: string): CompiledGlob => {
  let pattern = input.trim()
  if (pattern.startsWith("/")) {
    const rel = relativeInside(dir, pattern)
    pattern = rel !== undefined && rel !== "" ? rel : pattern.replace(/^\/+/, "")
  }
  while (pattern.startsWith("./")) pattern = pattern.slice(2)
  const anchored = pattern.includes("/")
  // Linear-time matching: a model's glob must not backtrack for ever (caught below as Invalid glob).
  const matcher = compileModelGlob(pattern, { basename: !anchored })
  if (isRefusal(matcher)) throw new Error(matcher.reason)
  let base = ""
  if (anchored) {
    const scan = picomatch.scan(pattern)
    const literal = scan.isGlob ? scan.base : scan.base.split("/").slice(0, -1).join("/")
    // An escaped name (`\[x\]`) is not a plain directory name: walk from the search path then.
    base = literal.includes("\\") ? "" : literal.replace(/\/+$/, "")
  }
  return { pattern, base, matches: (p) => matcher(p), nameGlob: nameGlobOf(pattern) }
}

/**
 * The first `k` of `paths` in code-unit order (comparePaths's), sorted; `paths` is reordered.
 * Only those are shown, so the rest are partitioned away (quickselect) instead of sorted:
 * 8,500 paths cost ~0.5 ms instead of ~1.3 ms.
 */
export const firstSorted = (paths: Array<string>, k: number): Array<string> => {
  let lo = 0
  let hi = paths.length - 1
  while (k < paths.length && lo < hi) {
    const pivot = paths[(lo + hi) >>> 1]!
    let i = lo
    let j = hi
    while (i <= j) {
      while (paths[i]! < pivot) i++
      while (paths[j]! > pivot) j--
      if (i <= j) {
        const t = paths[i]!
        paths[i] = paths[j]!
        paths[j] = t
        i++
        j--
      }
    }
    if (k - 1 <= j) hi = j
    else if (k - 1 >= i) lo = i
    else break
  }
  // The default sort compares UTF-16 code units, without a JS callback per comparison.
  return paths.slice(0, k).sort()
}

/**
 * Where the pattern's literal directories lead, when that is outside both the searched
 * directory and the project root; undefined when inside. The permission check saw only `path`:
 * `../../*` or `ld/*` (ld a link out of the project) would otherwise list what it never saw.
 * Checked on real paths, so a link is judged by where it leads. Below that directory nothing
 * can lead out: neither backend follows links while it walks.
 */
const leavesSearch = (root: string, dir: string, walkDir: string): Effect.Effect<string | undefined, never, LocalFs> =>
  Effect.flatMap(LocalFs, (fs) =>
    Effect.map(
      // All three exist (stat'ed just before, or the root): a failure to resolve one is a refusal.
      Effect.all([fs.realPath(walkDir), fs.realPath(dir), fs.realPath(root)]).pipe(Effect.option),
      (reals) => {
        if (reals._tag === "None") return walkDir
        const [real, realDir, realRoot] = reals.value
        return isInside(realDir, real) || isInside(realRoot, real) ? undefined : real
      }
    )
  )

export const GlobTool = defineTool({
  id: "glob",
  description:
    "Find files by path glob (e.g. `**/*.ts`, `src/**/test_*.py`; a pattern without / matches file names at any depth). Respects .gitignore, includes hidden files, sorted by path, at most 1,000. Use grep to search file contents.",
  parameters: Parameters,
  ...searchesBelow("file.search"),
  execute: ({ pattern, path }, ctx) =>
    Effect.gen(function* () {
      const fs = yield* FileSystem.FileSystem
      const backend = yield* CurrentSearchBackend
      const dir = resolvePath(ctx.root, path ?? ".")
      const shownDir = displayDir(ctx.root, dir)
      const info = yield* statOrFail(fs, ctx.root, dir, "Directory")
      if (info.type !== "Directory") {
        return yield* fail(
          `${displayPath(ctx.root, dir)} is a file, not a directory; pass a directory as path (or use read to see the file).`
        )
      }
      let glob: CompiledGlob
      try {
        glob = compileGlob(pattern, dir)
      } catch (e) {
        return yield* fail(`Invalid glob ${JSON.stringify(pattern)}: ${(e as Error).message}`)
      }

      const title = `${pattern}${path === undefined ? "" : ` in ${shownDir}`}`
      const none = (notes: ReadonlyArray<string>, backendName: string) => ({
        title: `${title}: no files`,
        output: [`No files match ${JSON.stringify(pattern)} in ${shownDir}.`, ...notes].join("\n"),
        metadata: { path: dir, count: 0, shown: 0, truncated: false, backend: backendName }
      })

      const walkDir = glob.base === "" ? dir : joinPath(dir, glob.base)
      if (glob.base !== "") {
        const baseInfo = yield* fs.stat(walkDir).pipe(Effect.option)
        if (baseInfo._tag === "None" || baseInfo.value.type !== "Directory") return none([], backend.name)
        const outside = yield* leavesSearch(ctx.root, dir, walkDir)
        if (outside !== undefined) {
          return yield* fail(
            `The pattern ${JSON.stringify(pattern)} leads out of ${shownDir} (to ${outside}): glob lists only what is inside its path. To search there, pass that directory as path.`
          )
        }
      }
      const listed = yield* backend
        .listFiles({
          root: ctx.root,
          dir: walkDir,
          ...(glob.nameGlob === undefined ? {} : { nameGlob: glob.nameGlob })
        })
        .pipe(Effect.mapError((e) => fail(`glob failed: ${readableError(e)}`)))

      // `*.ts`, `**/*.ts` or `src/**/*.ts` (plain directory names): the backend already listed,
      // below the pattern's directories, exactly the files whose name matches.
      const listedMatch =
        glob.nameGlob !== undefined &&
        (glob.pattern === glob.nameGlob ||
          glob.pattern === `**/${glob.nameGlob}` ||
          (PLAIN_DIRS.test(glob.base) && glob.pattern === `${glob.base}/**/${glob.nameGlob}`))
      // firstSorted reorders its input: a list kept sorted is only read, never copied.
      const matched: Array<string> = listedMatch
        ? listed.sorted === true
          ? (listed.files as Array<string>)
          : [...listed.files]
        : []
      // Listed files are clean absolute paths under dir: most need only the prefix cut off.
      const prefix = dir.endsWith("/") ? dir : `${dir}/`
      if (!listedMatch) {
        for (const file of listed.files) {
          const rel = file.startsWith(prefix) ? file.slice(prefix.length) : relativeInside(dir, file)
          if (rel !== undefined && glob.matches(rel)) matched.push(file)
        }
      }
      const hidden = hiddenFrom(ctx, DENIED)
      const visible = ctx.searchable === undefined ? matched : matched.filter((f) => !hidden(f))
      const notes = [
        ...(visible.length < matched.length
          ? [hiddenNote(matched.length - visible.length, "matching the pattern")]
          : []),
        ...listed.notes,
        ...(listed.skipped.length > 0 ? [skippedNote(listed.skipped, (p) => displayPath(ctx.root, p))] : [])
      ]
      if (visible.length === 0) return none(notes, listed.backend)
      const shown = listed.sorted === true ? visible.slice(0, MAX_GLOB_RESULTS) : firstSorted(visible, MAX_GLOB_RESULTS)
      const lines = shown.map((f) => displayPath(ctx.root, f))
      if (visible.length > shown.length) {
        lines.push(
          `(Showing ${shown.length} of ${visible.length} matching files. ${visible.length - shown.length} more matched; narrow the pattern or path.)`
        )
      }
      lines.push(...notes)
      return {
        title: `${title}: ${plural(visible.length, "file")}`,
        output: lines.join("\n"),
        metadata: {
          path: dir,
          count: visible.length,
          shown: shown.length,
          truncated: visible.length > shown.length,
          backend: listed.backend
        }
      }
    })
})
