/**
 * The one interface behind glob and grep. Two implementations give the same answers:
 * `ripgrep` (the rg binary shipped in @vscode/ripgrep, run with node:child_process) and
 * `walk` (a pure TypeScript walk over the LocalFs service). `auto.ts` picks between them.
 *
 * Shared rules, so both backends agree:
 * - .gitignore files are respected (see `ignore.ts` for which ones), hidden files are
 *   included, `.git` is never listed or searched, symbolic links are not followed (and not
 *   listed), only regular files are returned.
 * - A path given explicitly (the walk's directory, or grep's single file) is searched even if
 *   a .gitignore would hide it: naming it is explicit.
 * - Results are sorted by absolute path (then line), never in the order the walk found them.
 */
import { Data, type Effect, type FileSystem } from "effect"
import type { LocalFs } from "../../fs/local-fs.ts"
import { cutEnd } from "../../text/cut.ts"

/** The regex did not compile; `message` is the regex engine's own error text. */
export class InvalidPattern extends Data.TaggedError("InvalidPattern")<{ readonly message: string }> {}

/** The search could not run (bad include glob, unreadable directory, rg error). */
export class SearchFailed extends Data.TaggedError("SearchFailed")<{ readonly message: string }> {}

/** The rg binary is missing or cannot be spawned; the auto backend falls back to the walk. */
export class RipgrepUnavailable extends Data.TaggedError("RipgrepUnavailable")<{ readonly message: string }> {}

export type SearchError = InvalidPattern | SearchFailed | RipgrepUnavailable

export type BackendName = "ripgrep" | "walk" | "index"

export type SearchRequirements = FileSystem.FileSystem | LocalFs

export interface ListFilesRequest {
  /** The project root: bounds which ancestor .gitignore files apply. Absolute. */
  readonly root: string
  /** The directory to list, recursively. Absolute. */
  readonly dir: string
  /**
   * Only files whose name (not path) matches this glob, e.g. `*.ts`. A prefilter: it spares
   * listing files the caller would drop anyway, and never drops one a full-path match keeps.
   */
  readonly nameGlob?: string
}

export interface FileList {
  /** Absolute paths of the regular files, in no particular order unless `sorted`. */
  readonly files: ReadonlyArray<string>
  /** The files are in comparePaths order (the warm index lists them so): nothing to sort. */
  readonly sorted?: boolean
  /** Things the caller should mention (unreadable directories). */
  readonly notes: ReadonlyArray<string>
  /**
   * Dependency/build folders left out by default (default-skip.ts), absolute. The walk finds
   * every one; rg skips them itself, and only those directly in the listed directory are named.
   */
  readonly skipped: ReadonlyArray<string>
  readonly backend: BackendName
}

export interface GrepRequest {
  readonly root: string
  /** A directory to search recursively, or one file. Absolute. */
  readonly path: string
  /** True when `path` is a single file: only it is searched, and `include` is not applied. */
  readonly isFile: boolean
  /** A regex, ripgrep syntax (the walk backend compiles it as a JS RegExp). */
  readonly pattern: string
  /** A glob matched against file names only, e.g. `*.ts` or `*.{ts,tsx}`. */
  readonly include?: string
  /** How many matches (in sorted order) to return, after `offset` skipped ones; all are counted. */
  readonly limit: number
  /** How many matches (in sorted order) to skip first; default 0. */
  readonly offset?: number
  /** Letters match either case. */
  readonly caseInsensitive?: boolean
  /** A match may span lines (`.` matches a line end); each line it covers is a matching line. */
  readonly multiline?: boolean
  /** Lines of context to give before and after each matching line (non-matching lines only). */
  readonly before?: number
  readonly after?: number
  /** A name in FILE_TYPES (file-types.ts): only files of that type. Not applied to a single file. */
  readonly type?: string
}

/** A line around a match, shown for context. */
export interface ContextLine {
  /** 1-based. */
  readonly line: number
  readonly text: string
}

export interface GrepMatch {
  /** Absolute path. */
  readonly path: string
  /** 1-based. */
  readonly line: number
  /** The matched line without its line terminator, cut to `MAX_MATCH_LINE_CHARS` with a marker. */
  readonly text: string
  /**
   * With context asked for: the non-matching lines within `before` lines above and `after`
   * lines below, in line order. A line near two matches is in both; the caller shows it once.
   */
  readonly before?: ReadonlyArray<ContextLine>
  readonly after?: Array<ContextLine>
}

export interface GrepResult {
  /** The `limit` matches after the first `offset`, sorted by path, then line. */
  readonly matches: ReadonlyArray<GrepMatch>
  /** All matching lines. */
  readonly total: number
  /** Files with at least one match. */
  readonly files: number
  /** Matching lines per file, for every file with a match (absolute path → count). */
  readonly counts: ReadonlyMap<string, number>
  readonly notes: ReadonlyArray<string>
  /** As in FileList. */
  readonly skipped: ReadonlyArray<string>
  readonly backend: BackendName
}

export interface SearchBackend {
  readonly name: BackendName | "auto"
  readonly listFiles: (request: ListFilesRequest) => Effect.Effect<FileList, SearchError, SearchRequirements>
  readonly grep: (request: GrepRequest) => Effect.Effect<GrepResult, SearchError, SearchRequirements>
  /**
   * grep over exactly these files (absolute; the ignore rules, `include` and `type` already
   * applied by the caller): the warm index's candidates. `skipped` is empty.
   */
  readonly grepFiles?: (
    request: GrepRequest,
    files: ReadonlyArray<string>
  ) => Effect.Effect<GrepResult, SearchError, SearchRequirements>
}

// ---------------------------------------------------------------------------------------------
// Shared helpers

/** Matched lines longer than this are cut. */
export const MAX_MATCH_LINE_CHARS = 500

/** Code-unit order: deterministic and independent of locale. */
export const comparePaths = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0)

export const compareMatches = (a: GrepMatch, b: GrepMatch): number => comparePaths(a.path, b.path) || a.line - b.line

/** Cuts `text` to `max` characters (never inside a surrogate pair) and says how many were dropped. */
export const cutLine = (text: string, max: number): string => {
  if (text.length <= max) return text
  const end = cutEnd(text, max)
  return `${text.slice(0, end)}… [${text.length - end} chars cut]`
}

/** A matched line as both backends report it: terminator gone, long lines cut. */
export const matchText = (raw: string): string =>
  cutLine(raw.endsWith("\r") ? raw.slice(0, -1) : raw, MAX_MATCH_LINE_CHARS)

/**
 * Keeps the first `limit` matches in sorted order while counting all of them, in bounded
 * memory: a search that matches millions of lines never holds more than ~2×limit.
 */
export class MatchCollector {
  private kept: Array<GrepMatch> = []
  private readonly filesSeen = new Map<string, number>()
  /** The first offset + limit are kept; the page is cut from them at the end. */
  private readonly limit: number
  private readonly offset: number
  total = 0

  constructor(limit: number, offset = 0) {
    this.limit = offset + limit
    this.offset = offset
  }

  add(match: GrepMatch): void {
    this.total++
    this.filesSeen.set(match.path, (this.filesSeen.get(match.path) ?? 0) + 1)
    // Counting only (grep's files and count modes): no line is kept.
    if (this.limit === 0) return
    this.kept.push(match)
    if (this.kept.length >= Math.max(2 * this.limit, 1024)) this.compact()
  }

  private compact(): void {
    this.kept.sort(compareMatches)
    if (this.kept.length > this.limit) this.kept.length = this.limit
  }

  get files(): number {
    return this.filesSeen.size
  }

  result(backend: BackendName, notes: ReadonlyArray<string>, skipped: ReadonlyArray<string>): GrepResult {
    this.compact()
    const matches = this.offset === 0 ? this.kept : this.kept.slice(this.offset)
    return { matches, total: this.total, files: this.filesSeen.size, counts: this.filesSeen, notes, skipped, backend }
  }
}
