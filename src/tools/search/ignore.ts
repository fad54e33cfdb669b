/**
 * .gitignore semantics shared by both search backends.
 *
 * Which rules apply to a walk of directory D:
 * - every `.gitignore` inside D (each applies to its own subtree, deeper files win), and
 * - the `.gitignore` files of D's ancestors from the project root down to D's parent
 *   (only when D is inside the root: nothing above the root applies, so a stray
 *   `~/.gitignore` or a parent repository never hides project files).
 * Global git excludes, `.git/info/exclude`, `.ignore` and `.rgignore` files are not read:
 * the results must not depend on the machine or on whether the tree is a git repository.
 *
 * Precedence is git's: the deepest `.gitignore` with a matching rule decides, and inside one
 * file the last matching rule wins (`!keep.log` re-includes). A directory that is ignored is
 * not entered, so nothing below it can be re-included.
 */

import { Effect } from "effect"
import ignore, { type Ignore } from "ignore"
import type { DerivedSpec, LocalFsShape } from "../../fs/local-fs.ts"
import { dirnameOf, isInside, relativeInside } from "../../path/path.ts"

/** The rules of one `.gitignore`, anchored at the directory that holds it. */
export interface IgnoreLevel {
  /** Absolute directory of the `.gitignore`. */
  readonly dir: string
  readonly lines: ReadonlyArray<string>
  readonly matcher: Ignore
}

/** Rules from the shallowest directory to the deepest. */
export type IgnoreChain = ReadonlyArray<IgnoreLevel>

interface TestResult {
  readonly ignored: boolean
  readonly unignored: boolean
}

/** Case-sensitive like git and ripgrep on Linux (the `ignore` package defaults to case-insensitive). */
export const makeMatcher = (lines: ReadonlyArray<string>): Ignore => ignore({ ignorecase: false }).add([...lines])

/**
 * Tests one path against one rule set without looking at its parent directories.
 *
 * `Ignore#test` also tests every parent directory against the same file. That is wrong for a
 * chain of files: `build/` in the root file must not hide `src/build/x` once `src/.gitignore`
 * re-included `src/build/` with `!build/`. The walk already decided every parent directory with
 * the whole chain, so only the path itself is tested here, like git and ripgrep do. The
 * `ignore` package (pinned, 7.0.5) exposes that single-path test only on its rule manager; the
 * public `test` is the fallback if that internal ever moves.
 */
const testOne = (matcher: Ignore, rel: string): TestResult => {
  const rules = (matcher as unknown as { _rules?: { test?: unknown } })._rules
  if (rules !== undefined && typeof rules.test === "function") {
    return (rules.test as (path: string, checkUnignored: boolean, mode: string) => TestResult).call(
      rules,
      rel,
      true,
      "regex"
    )
  }
  return matcher.test(rel)
}

/**
 * What the chain says of `abs`: "ignored", "included" (a `!` rule re-includes it) or "none"
 * (no rule names it). `abs` must lie below the chain's directories. Directories are tested
 * with a trailing `/` so that `build/` patterns match them only.
 */
export const ignoreVerdict = (chain: IgnoreChain, abs: string, isDir: boolean): "ignored" | "included" | "none" => {
  for (let i = chain.length - 1; i >= 0; i--) {
    const level = chain[i]
    if (level === undefined) continue
    const rel = relativeInside(level.dir, abs)
    if (rel === undefined || rel === "") continue
    const result = testOne(level.matcher, isDir ? `${rel}/` : rel)
    if (result.ignored) return "ignored"
    if (result.unignored) return "included"
  }
  return "none"
}

/** Whether `abs` is ignored by the chain (see ignoreVerdict). */
export const isIgnored = (chain: IgnoreChain, abs: string, isDir: boolean): boolean =>
  ignoreVerdict(chain, abs, isDir) === "ignored"

/** Whether `rel` (relative to the matcher's directory) matches extra ignore patterns, e.g. ls's `ignore`. */
export const matchesPatterns = (matcher: Ignore, rel: string, isDir: boolean): boolean =>
  testOne(matcher, isDir ? `${rel}/` : rel).ignored

const splitLines = (text: string): Array<string> => text.split(/\r?\n/)

const compileLevel = (dir: string, text: string): IgnoreLevel => {
  const lines = splitLines(text)
  return { dir, lines, matcher: makeMatcher(lines) }
}

/**
 * A compiled .gitignore. The LocalFs layer may keep it while the file is unchanged: every walk
 * below a directory reads its ancestors' rules. A matcher is only ever asked through testOne,
 * which keeps no per-path cache, so walks can share it.
 */
const GITIGNORE: DerivedSpec<IgnoreLevel> = { name: "gitignore", derive: compileLevel, maxPaths: 1_000 }

/** `dir/.gitignore` when it is a readable file; nothing otherwise. */
export const loadLevel = (fs: LocalFsShape, dir: string): Effect.Effect<IgnoreLevel | undefined> =>
  fs.readDerived(dir, ".gitignore", GITIGNORE)

/** The directories from the root down to `dir`'s parent; empty when `dir` is the root or outside it. */
export const ancestorDirs = (root: string, dir: string): Array<string> => {
  if (!isInside(root, dir) || relativeInside(root, dir) === "") return []
  const out: Array<string> = []
  let cur = dirnameOf(dir)
  while (isInside(root, cur)) {
    out.push(cur)
    if (relativeInside(root, cur) === "") break
    const next = dirnameOf(cur)
    if (next === cur) break
    cur = next
  }
  return out.reverse()
}

/** The `.gitignore` rules of `dir`'s ancestors up to the project root, shallowest first. */
export const ancestorChain = (fs: LocalFsShape, root: string, dir: string): Effect.Effect<IgnoreChain> => {
  const dirs = ancestorDirs(root, dir)
  // The root itself (the usual ls and search) has no ancestors to read.
  if (dirs.length === 0) return Effect.succeed([])
  // One level after another: on a local disk each is a stat (and a compile kept from before).
  return Effect.map(
    Effect.forEach(dirs, (d) => loadLevel(fs, d)),
    (levels) => levels.filter((l) => l !== undefined)
  )
}

// ---------------------------------------------------------------------------------------------
// Ripgrep: ancestor rules as one ignore file anchored at the project root

/** git drops trailing spaces unless the last one is escaped with a backslash. */
const trimTrailingSpaces = (line: string): string => {
  let end = line.length
  while (end > 0 && line[end - 1] === " " && line[end - 2] !== "\\") end--
  return line.slice(0, end)
}

const escapeGlob = (segment: string): string => segment.replace(/[\\*?[\]{}]/g, (c) => `\\${c}`)

/**
 * Rewrites one `.gitignore` line from `relDir` (relative to the root, "" for the root) so that it
 * means the same thing when read from a file anchored at the root. ripgrep reads `--ignore-file`
 * rules relative to its working directory, which is the root: `gen/` in `src/.gitignore` becomes
 * `/src/**\/gen/`, `/local.txt` becomes `/src/local.txt`, `!keep.log` becomes `!/src/**\/keep.log`.
 */
export const anchorLine = (line: string, relDir: string): string | undefined => {
  const raw = trimTrailingSpaces(line.endsWith("\r") ? line.slice(0, -1) : line)
  if (raw === "" || raw.startsWith("#")) return undefined
  if (relDir === "") return raw
  const negated = raw.startsWith("!")
  const body = negated ? raw.slice(1) : raw
  const dirOnly = body.endsWith("/")
  let core = dirOnly ? body.slice(0, -1) : body
  const anchored = core.includes("/")
  if (core.startsWith("/")) core = core.slice(1)
  if (core === "") return undefined
  const prefix = relDir.split("/").map(escapeGlob).join("/")
  return `${negated ? "!" : ""}/${prefix}/${anchored ? "" : "**/"}${core}${dirOnly ? "/" : ""}`
}

/** The ancestor chain as the text of one ignore file anchored at the root (shallowest rules first). */
export const anchoredIgnoreFile = (root: string, chain: IgnoreChain): string => {
  const out: Array<string> = []
  for (const level of chain) {
    const rel = relativeInside(root, level.dir)
    if (rel === undefined) continue
    for (const line of level.lines) {
      const anchoredLine = anchorLine(line, rel)
      if (anchoredLine !== undefined) out.push(anchoredLine)
    }
  }
  return out.length === 0 ? "" : `${out.join("\n")}\n`
}

/** Never listed, never searched: `.git` at any depth (a directory, or a file in worktrees). */
export const isGitEntry = (name: string): boolean => name === ".git"
