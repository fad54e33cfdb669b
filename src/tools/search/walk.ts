/**
 * The pure TypeScript backend: a breadth-first walk over the LocalFs service with the
 * .gitignore rules of `ignore.ts`, glob filters and grep's regexes on a linear-time RE2 engine. It is
 * the fallback when rg cannot run, and `ls` uses `walkTree` directly (rg cannot list
 * directories, and ls must show empty ones).
 */

import { Effect, type PlatformError } from "effect"
import type { Ignore } from "ignore"
import { type DirectoryEntry, type FileType, LocalFs, type LocalFsShape } from "../../fs/local-fs.ts"
import { basenameOf, childPath, relativeInside } from "../../path/path.ts"
import { compileModelGlob } from "../../text/glob.ts"
import { compileModelRegex, isRefusal, type ModelRegex, type RegexFlags } from "../../text/regex.ts"
import { readableError } from "../../tool/readable-error.ts"
import {
  type ContextLine,
  type FileList,
  type GrepRequest,
  InvalidPattern,
  type ListFilesRequest,
  MatchCollector,
  matchText,
  type SearchBackend,
  SearchFailed
} from "./backend.ts"
import { DEFAULT_SKIP } from "./default-skip.ts"
import { fileTypeMatcher } from "./file-types.ts"
import { ancestorChain, type IgnoreChain, ignoreVerdict, isGitEntry, loadLevel, matchesPatterns } from "./ignore.ts"

export type EntryKind = "file" | "dir" | "symlink" | "other"

export interface WalkEntry {
  readonly name: string
  /** Absolute path. */
  readonly path: string
  readonly kind: EntryKind
}

export interface WalkedDir {
  /** Absolute path. */
  readonly path: string
  /** 0 for the walked directory itself. */
  readonly depth: number
  /** The entries that are not ignored, sorted by name. */
  readonly entries: ReadonlyArray<WalkEntry>
}

export interface WalkResult {
  /** Breadth-first: the walked directory first, then each level in order. */
  readonly dirs: ReadonlyArray<WalkedDir>
  /** Entries seen (not ignored). */
  readonly entries: number
  /** False when `maxEntries` stopped the walk early. */
  readonly complete: boolean
  /** Directories below the walked one that could not be read (skipped, like rg does). */
  readonly unreadable: ReadonlyArray<string>
  /** Dependency and build folders skipped by default (default-skip.ts), absolute. */
  readonly skipped: ReadonlyArray<string>
}

export interface WalkOptions {
  readonly root: string
  /** The directory to walk; its own unreadability is an error. */
  readonly dir: string
  /** Extra gitignore-style patterns relative to `dir`, checked before any .gitignore (ls's `ignore`). */
  readonly extraIgnore?: Ignore
  /** Stop descending once this many entries were seen (the current level is finished). */
  readonly maxEntries?: number
  /** Read only this many levels below `dir` (0: `dir`'s own entries). Default: all. */
  readonly maxDepth?: number
  /** Called with each directory just before it is read (the warm index starts watching it there). */
  readonly onDir?: (path: string) => void
  /** Run before each directory is read: the warm index's build yields to the event loop there (reads are synchronous). */
  readonly pace?: Effect.Effect<void>
}

const kindOf = (type: FileType): EntryKind =>
  type === "Directory" ? "dir" : type === "File" ? "file" : type === "SymbolicLink" ? "symlink" : "other"

interface Pending {
  readonly path: string
  readonly depth: number
  readonly chain: IgnoreChain
}

/** A directory's entries with the ignore rules that apply below them: its own .gitignore added. */
const readDir = (fs: LocalFsShape, pending: Pending) =>
  Effect.flatMap(fs.readDirectory(pending.path), (entries: ReadonlyArray<DirectoryEntry>) => {
    const result = (chain: IgnoreChain) => ({ entries, chain })
    if (!entries.some((e) => e.name === ".gitignore" && e.type === "File")) return Effect.succeed(result(pending.chain))
    return Effect.map(loadLevel(fs, pending.path), (own) =>
      result(own === undefined ? pending.chain : [...pending.chain, own])
    )
  })

/**
 * Walks `dir` breadth-first, applying .gitignore rules, skipping `.git` and the default-skip
 * folders no rule names, not following links. Each directory's entries come sorted by name, as
 * LocalFs.readDirectory gives them.
 */
export const walkTree = (options: WalkOptions): Effect.Effect<WalkResult, PlatformError.PlatformError, LocalFs> =>
  // Hand-chained: every ls passes through here (docs/architecture.md).
  Effect.flatMap(LocalFs, (fs) =>
    Effect.flatMap(ancestorChain(fs, options.root, options.dir), (ancestors) => {
      const dirs: Array<WalkedDir> = []
      const unreadable: Array<string> = []
      const skipped: Array<string> = []
      let seen = 0
      const readOne = (p: Pending) => {
        const read = Effect.suspend(() => {
          options.onDir?.(p.path)
          return p.depth === 0
            ? readDir(fs, p)
            : readDir(fs, p).pipe(Effect.catchTag("PlatformError", () => Effect.succeed(undefined)))
        })
        return options.pace === undefined ? read : Effect.andThen(options.pace, read)
      }
      /** One level of the tree, then the next. */
      const walkLevel = (level: ReadonlyArray<Pending>): Effect.Effect<WalkResult, PlatformError.PlatformError> =>
        Effect.flatMap(
          // One directory needs no concurrent fibers (most ls calls read just one level).
          level.length === 1
            ? Effect.map(readOne(level[0]!), (one) => [one])
            : Effect.forEach(level, readOne, { concurrency: 16 }),
          (read) => {
            const next: Array<Pending> = []
            for (let i = 0; i < level.length; i++) {
              const pending = level[i] as Pending
              const result = read[i]
              if (result === undefined) {
                unreadable.push(pending.path)
                dirs.push({ path: pending.path, depth: pending.depth, entries: [] })
                continue
              }
              const entries: Array<WalkEntry> = []
              const prefix = childPath(pending.path, "")
              for (const e of result.entries) {
                if (isGitEntry(e.name)) continue
                const abs = prefix + e.name
                const kind = kindOf(e.type)
                const isDir = kind === "dir"
                if (options.extraIgnore !== undefined) {
                  const rel = relativeInside(options.dir, abs)
                  if (rel !== undefined && rel !== "" && matchesPatterns(options.extraIgnore, rel, isDir)) continue
                }
                const verdict = ignoreVerdict(result.chain, abs, isDir)
                if (verdict === "ignored") continue
                if (isDir && verdict === "none" && DEFAULT_SKIP.has(e.name)) {
                  skipped.push(abs)
                  continue
                }
                entries.push({ name: e.name, path: abs, kind })
                if (isDir && (options.maxDepth === undefined || pending.depth < options.maxDepth)) {
                  next.push({ path: abs, depth: pending.depth + 1, chain: result.chain })
                }
              }
              seen += entries.length
              dirs.push({ path: pending.path, depth: pending.depth, entries })
            }
            const stopped = options.maxEntries !== undefined && seen >= options.maxEntries && next.length > 0
            if (stopped || next.length === 0) {
              return Effect.succeed({ dirs, entries: seen, complete: !stopped, unreadable, skipped })
            }
            return walkLevel(next)
          }
        )
      return walkLevel([{ path: options.dir, depth: 0, chain: ancestors }])
    })
  )

export const unreadableNote = (paths: ReadonlyArray<string>): Array<string> =>
  paths.length === 0
    ? []
    : [
        `${paths.length} director${paths.length === 1 ? "y" : "ies"} could not be read and ${paths.length === 1 ? "was" : "were"} skipped (first: ${paths[0]}).`
      ]

const listFiles = (request: ListFilesRequest): Effect.Effect<FileList, SearchFailed, LocalFs> => {
  // glob's name filter, in linear time; one it cannot compile is an error, never an empty list.
  const nameMatches = request.nameGlob === undefined ? undefined : compileModelGlob(request.nameGlob)
  if (nameMatches !== undefined && isRefusal(nameMatches)) {
    return Effect.fail(
      new SearchFailed({ message: `Invalid glob ${JSON.stringify(request.nameGlob)}: ${nameMatches.reason}` })
    )
  }
  return walkTree({ root: request.root, dir: request.dir }).pipe(
    Effect.map((walked): FileList => {
      const files: Array<string> = []
      for (const d of walked.dirs) {
        for (const e of d.entries) {
          if (e.kind === "file" && (nameMatches === undefined || nameMatches(basenameOf(e.path)))) files.push(e.path)
        }
      }
      return { files, notes: unreadableNote(walked.unreadable), skipped: walked.skipped, backend: "walk" }
    }),
    Effect.mapError((e) => new SearchFailed({ message: `Cannot read ${request.dir}: ${readableError(e)}` }))
  )
}

/**
 * Compiles a ripgrep-syntax regex on the linear-time engine (RE2 syntax, as rg's own): the
 * pattern is the model's, and a backtracking engine could hang the process on it.
 */
export const compileRegex = (pattern: string, flags: RegexFlags = {}): ModelRegex | InvalidPattern => {
  const regex = compileModelRegex(pattern, flags)
  return isRefusal(regex) ? new InvalidPattern({ message: regex.reason }) : regex
}

/** A file-name matcher for grep's `include`, like `*.ts` or `*.{ts,tsx}`, in linear time. */
export const compileInclude = (include: string): ((name: string) => boolean) | SearchFailed => {
  const match = compileModelGlob(include)
  return isRefusal(match)
    ? new SearchFailed({ message: `Invalid include glob ${JSON.stringify(include)}: ${match.reason}` })
    : match
}

const decoder = new TextDecoder("utf-8")

interface FileSearch {
  readonly regex: ModelRegex
  readonly multiline: boolean
  readonly before: number
  readonly after: number
}

/** The 0-based lines a multiline regex covers: each match's first line through its last. */
const multilineMatches = (regex: ModelRegex, text: string, lineCount: number): Array<number> => {
  const starts = [0]
  for (let i = text.indexOf("\n"); i >= 0; i = text.indexOf("\n", i + 1)) starts.push(i + 1)
  const lineOf = (offset: number): number => {
    let lo = 0
    let hi = starts.length - 1
    while (lo < hi) {
      const mid = (lo + hi + 1) >>> 1
      if (starts[mid]! <= offset) lo = mid
      else hi = mid - 1
    }
    return lo
  }
  const hit = new Set<number>()
  regex.eachMatch(text, (start, end) => {
    // A match ending with a line's terminator ends on that line, as rg reports it.
    const first = lineOf(start)
    const last = end > start ? lineOf(end - 1) : first
    for (let l = first; l <= last && l < lineCount; l++) hit.add(l)
  })
  return [...hit].sort((a, b) => a - b)
}

/** The non-matching lines in [from, to] (0-based, clamped), as 1-based context lines. */
const contextLines = (lines: ReadonlyArray<string>, hit: ReadonlySet<number>, from: number, to: number) => {
  const out: Array<ContextLine> = []
  for (let l = Math.max(0, from); l <= Math.min(lines.length - 1, to); l++) {
    if (!hit.has(l)) out.push({ line: l + 1, text: matchText(lines[l]!) })
  }
  return out
}

/** Adds the matching lines of one file; a file with a NUL byte is binary and skipped, like rg does. */
const searchFile = (search: FileSearch, file: string, bytes: Uint8Array, collector: MatchCollector): void => {
  if (bytes.includes(0)) return
  const text = decoder.decode(bytes)
  const lines = text.split("\n")
  if (lines.length > 0 && lines[lines.length - 1] === "") lines.pop()
  let hits: Array<number>
  if (search.multiline) hits = multilineMatches(search.regex, text, lines.length)
  else {
    hits = []
    // Tested with a CR still on (rg's default line terminator is LF only), shown without it.
    for (let i = 0; i < lines.length; i++) if (search.regex.test(lines[i]!)) hits.push(i)
  }
  const withContext = search.before > 0 || search.after > 0
  const hitSet = withContext ? new Set(hits) : undefined
  for (const i of hits) {
    const line = lines[i]!
    if (hitSet === undefined) {
      collector.add({ path: file, line: i + 1, text: matchText(line) })
      continue
    }
    collector.add({
      path: file,
      line: i + 1,
      text: matchText(line),
      ...(search.before > 0 ? { before: contextLines(lines, hitSet, i - search.before, i - 1) } : {}),
      ...(search.after > 0 ? { after: contextLines(lines, hitSet, i + 1, i + search.after) } : {})
    })
  }
}

/** The files of a directory grep searches: the walk's list, filtered by `include` and `type`. */
const grepTargets = Effect.fnUntraced(function* (request: GrepRequest) {
  const listed = yield* listFiles({ root: request.root, dir: request.path })
  let files = listed.files
  if (request.include !== undefined) {
    const include = compileInclude(request.include)
    if (include instanceof SearchFailed) return yield* include
    files = files.filter((f) => include(basenameOf(f)))
  }
  if (request.type !== undefined) {
    const ofType = fileTypeMatcher(request.type)
    files = files.filter((f) => ofType(basenameOf(f)))
  }
  return { ...listed, files }
})

/** Searches `files` (or, when undefined, what `grepTargets` lists) with the walk's matcher. */
const searchFiles = Effect.fnUntraced(function* (request: GrepRequest, given: ReadonlyArray<string> | undefined) {
  const fs = yield* LocalFs
  const multiline = request.multiline === true
  const regex = compileRegex(request.pattern, { caseInsensitive: request.caseInsensitive === true, multiline })
  if (regex instanceof InvalidPattern) return yield* regex
  let files: ReadonlyArray<string>
  const notes: Array<string> = []
  let skipped: ReadonlyArray<string> = []
  if (given !== undefined) files = given
  else if (request.isFile) files = [request.path]
  else {
    const listed = yield* grepTargets(request)
    notes.push(...listed.notes)
    skipped = listed.skipped
    files = listed.files
  }
  const search: FileSearch = { regex, multiline, before: request.before ?? 0, after: request.after ?? 0 }
  const collector = new MatchCollector(request.limit, request.offset ?? 0)
  let unreadableFiles = 0
  yield* Effect.forEach(
    files,
    (file) =>
      fs.readFile(file).pipe(
        Effect.map((bytes) => searchFile(search, file, bytes, collector)),
        Effect.catchTag("PlatformError", () =>
          Effect.sync(() => {
            unreadableFiles++
          })
        )
      ),
    { concurrency: 8, discard: true }
  )
  if (unreadableFiles > 0) notes.push(`${unreadableFiles} file(s) could not be read and were skipped.`)
  return collector.result("walk", notes, skipped)
})

/** The pure TypeScript backend. */
export const walkBackend: SearchBackend = {
  name: "walk",
  listFiles,
  grep: (request) => searchFiles(request, undefined),
  grepFiles: searchFiles
}
