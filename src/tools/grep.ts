/**
 * `grep`: lines matching a regex (ripgrep syntax) in file contents.
 *
 * Output: `path:line:text` per matching line, the path relative to the project root (absolute
 * when outside it), sorted by path then line (rg's parallel order is not deterministic), at
 * most `head_limit` lines (default 250) from `offset` (default 0), and then a line saying how
 * many more matched and the `offset` of the next page. Dependency and build folders no
 * .gitignore names are skipped, with a line saying so (search/default-skip.ts). Lines
 * over 500 chars end with `… [N chars cut]`. Binary files are skipped, .gitignore respected,
 * hidden files searched, `.git` never. `include` filters on file names (`*.ts`, `*.{ts,tsx}`),
 * `type` by rg's file types (search/file-types.ts).
 *
 * Modes (docs/search.md): `content` (the default, as before the modes came) prints matching
 * lines, with `-A`/`-B`/`-C` lines of context rg's way (`path-N-text`, `--` between groups);
 * `files_with_matches` the files, `count` `path:N` per file, both paged over files. `-i`
 * ignores case; `multiline` lets a match span lines (rg's `-U --multiline-dotall`).
 */
import { Effect, FileSystem, type PlatformError, Schema } from "effect"
import { LocalFs } from "../fs/local-fs.ts"
import { displayDir, displayPath, resolvePath } from "../path/path.ts"
import { plural } from "../text/plural.ts"
import { fail } from "../tool/errors.ts"
import { searchesBelow } from "../tool/presets.ts"
import { defineTool } from "../tool/tool.ts"
import { fsFailure, statOrFail } from "./failures/fs.ts"
import { CurrentSearchBackend } from "./search/auto.ts"
import { skippedNote } from "./search/default-skip.ts"
import { FILE_TYPES, isFileType } from "./search/file-types.ts"
import { filesOrCounts } from "./search/grep-files.ts"
import { contentLines, type OutputMode } from "./search/grep-output.ts"
import { verifyMatches } from "./search/verify.ts"
import { DENIED_OR_SECRET, hiddenFrom, hiddenNote } from "./search/visibility.ts"

export const DEFAULT_HEAD_LIMIT = 250
const BINARY_SNIFF_BYTES = 8192

/** The first `bytes` bytes of a file (fewer when it is shorter). */
export const readHead = (
  fs: FileSystem.FileSystem,
  abs: string,
  bytes: number
): Effect.Effect<Uint8Array, PlatformError.PlatformError> =>
  Effect.gen(function* () {
    const file = yield* fs.open(abs)
    const head = new Uint8Array(bytes)
    let filled = 0
    while (filled < bytes) {
      const n = yield* file.read(head.subarray(filled))
      if (n === 0) break
      filled += n
    }
    return head.subarray(0, filled)
  }).pipe(Effect.scoped)

/** Context lines: a few are useful, more is a read; cut to this so one call cannot print whole files. */
const MAX_CONTEXT = 100
const ContextCount = Schema.Int.check(Schema.isGreaterThanOrEqualTo(0))

const Parameters = Schema.Struct({
  pattern: Schema.String.check(Schema.isMinLength(1)).annotate({
    description: "Regex to search for (ripgrep syntax); escape ( ) [ ] { } . * + ? | \\ to match them literally."
  }),
  path: Schema.optionalKey(
    Schema.String.annotate({
      description: "Directory or single file to search, absolute or relative to the project root (default: the root)."
    })
  ),
  include: Schema.optionalKey(
    Schema.String.annotate({
      description: "Only search files whose name matches this glob, e.g. `*.ts` or `*.{ts,tsx}`."
    })
  ),
  head_limit: Schema.optionalKey(
    Schema.Int.check(Schema.isGreaterThan(0)).annotate({
      description: `Most result lines to return (default ${DEFAULT_HEAD_LIMIT}).`
    })
  ),
  offset: Schema.optionalKey(
    Schema.Int.check(Schema.isGreaterThanOrEqualTo(0)).annotate({
      description: "Result lines to skip first, for the next page (default 0)."
    })
  ),
  output_mode: Schema.optionalKey(
    Schema.Literals(["content", "files_with_matches", "count"]).annotate({
      description: "Default content (lines); files_with_matches and count (per file) cost fewer tokens."
    })
  ),
  // Names and meanings as rg's flags, which models know: a few words each.
  "-A": Schema.optionalKey(ContextCount.annotate({ description: "Lines after each match." })),
  "-B": Schema.optionalKey(ContextCount.annotate({ description: "Lines before each match." })),
  "-C": Schema.optionalKey(ContextCount.annotate({ description: "Lines before and after." })),
  "-i": Schema.optionalKey(Schema.Boolean.annotate({ description: "Ignore case." })),
  multiline: Schema.optionalKey(
    Schema.Boolean.annotate({ description: "`.` matches newlines; matches may span lines." })
  ),
  type: Schema.optionalKey(Schema.String.annotate({ description: "rg file type (js, py, rust, …)." }))
})

/** Unclosed `{` or `[` (both backends would read such a glob differently: rg rejects it). */
const unbalanced = (glob: string): boolean => {
  let braces = 0
  let brackets = 0
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i]
    if (c === "\\") i++
    else if (c === "{") braces++
    else if (c === "}") braces--
    else if (c === "[") brackets++
    else if (c === "]" && brackets > 0) brackets--
    if (braces < 0) return true
  }
  return braces !== 0 || brackets !== 0
}

export const GrepTool = defineTool({
  id: "grep",
  description:
    "Search file contents with a regex (ripgrep syntax). Returns `path:line:text` lines sorted by path (or, by output_mode, files or counts); at most head_limit (default 250) from offset (a last line gives the next offset). Respects .gitignore, skips binary files and dependency folders. Narrow with path, include (file-name glob) or type; use glob to find files by name.",
  parameters: Parameters,
  ...searchesBelow("file.search"),
  execute: (args, ctx) =>
    Effect.gen(function* () {
      const { pattern, path, include, head_limit, offset, type } = args
      const fs = yield* FileSystem.FileSystem
      const backend = yield* CurrentSearchBackend
      const target = resolvePath(ctx.root, path ?? ".")
      if (include?.includes("/")) {
        return yield* fail(
          `include matches file names only, so it cannot contain "/" (got ${JSON.stringify(include)}). Put the directory in path and the name pattern in include, e.g. path "src", include "*.ts".`
        )
      }
      if (include !== undefined && unbalanced(include)) {
        return yield* fail(
          `Invalid include glob ${JSON.stringify(include)}: unbalanced { } or [ ]. Use a file-name glob such as \`*.ts\` or \`*.{ts,tsx}\`.`
        )
      }
      if (type !== undefined && !isFileType(type)) {
        const near = Object.keys(FILE_TYPES).filter((t) => t[0] === type[0]?.toLowerCase())
        return yield* fail(
          `Unknown file type ${JSON.stringify(type)}. Types are ripgrep's names${near.length > 0 ? ` (starting with ${JSON.stringify(type[0]?.toLowerCase())}: ${near.slice(0, 20).join(", ")})` : " (js, ts, py, rust, go, java, c, cpp, …)"}; or filter by name with include, e.g. \`*.ext\`.`
        )
      }
      const info = yield* statOrFail(fs, ctx.root, target, "Path")
      if (info.type !== "Directory" && info.type !== "File") {
        return yield* fail(`${displayPath(ctx.root, target)} is not a regular file or directory (${info.type}).`)
      }
      const isFile = info.type === "File"
      const where = isFile ? displayPath(ctx.root, target) : displayDir(ctx.root, target)
      const title = `/${pattern}/${path === undefined ? "" : ` in ${where}`}`

      if (isFile) {
        const head = yield* readHead(fs, target, BINARY_SNIFF_BYTES).pipe(
          Effect.mapError((e) => fsFailure(e, ctx.root, target))
        )
        if (head.includes(0)) {
          return {
            title: `${title}: binary file`,
            output: `No matches: ${where} is a binary file and grep skips binary files. Inspect it with bash (e.g. \`strings ${where} | grep …\`).`,
            metadata: { path: target, matches: 0, files: 0, shown: 0, truncated: false }
          }
        }
      }

      const mode: OutputMode = args.output_mode ?? "content"
      const content = mode === "content"
      const before = content ? Math.min(args["-B"] ?? args["-C"] ?? 0, MAX_CONTEXT) : 0
      const after = content ? Math.min(args["-A"] ?? args["-C"] ?? 0, MAX_CONTEXT) : 0
      const limit = head_limit ?? DEFAULT_HEAD_LIMIT
      const skip = offset ?? 0
      const result = yield* backend
        .grep({
          root: ctx.root,
          path: target,
          isFile,
          pattern,
          // The files and count modes page over files: no line needs keeping.
          limit: content ? limit : 0,
          offset: content ? skip : 0,
          ...(include === undefined ? {} : { include }),
          ...(args["-i"] === true ? { caseInsensitive: true } : {}),
          ...(args.multiline === true ? { multiline: true } : {}),
          ...(before > 0 ? { before } : {}),
          ...(after > 0 ? { after } : {}),
          ...(type === undefined ? {} : { type })
        })
        .pipe(
          Effect.catchTags({
            InvalidPattern: (e) =>
              Effect.fail(
                fail(
                  `Invalid regex ${JSON.stringify(pattern)}:\n${e.message}\nEscape regex metacharacters such as ( ) [ ] { } . * + ? | \\ with a backslash to match them literally.`
                )
              ),
            SearchFailed: (e) => Effect.fail(fail(`grep failed: ${e.message}`)),
            RipgrepUnavailable: (e) => Effect.fail(fail(`grep failed: ${e.message}`))
          })
        )

      // What the backend read is shown only as far as a verified read confirms it (search/verify.ts).
      const localFs = yield* LocalFs
      const targetReal =
        ctx.checked?.find((p) => p.abs === target)?.real ??
        (yield* localFs.realPath(target).pipe(Effect.orElseSucceed(() => target)))
      const verified = yield* verifyMatches(localFs, result.matches, target, targetReal, [ctx.root])

      const filters = [
        ...(include === undefined || isFile ? [] : [`files matching ${include}`]),
        ...(type === undefined || isFile ? [] : [`type ${type}`])
      ]
      const filter = filters.length === 0 ? "" : ` (${filters.join(", ")})`
      // A file the caller may not read is not searched for it either: its lines never show.
      const isHidden = hiddenFrom(ctx, DENIED_OR_SECRET)
      if (mode !== "content") {
        const page = { ctx, pattern, where, filter, title, target, skip, limit, head_limit }
        return yield* filesOrCounts(mode, result, isHidden, page)
      }
      // Many matches share a file: each file is checked once.
      const hiddenPaths = new Set([...new Set(verified.kept.map((m) => m.path))].filter(isHidden))
      const matches = hiddenPaths.size === 0 ? verified.kept : verified.kept.filter((m) => !hiddenPaths.has(m.path))
      const hiddenFiles = hiddenPaths.size
      const notes = [
        ...(hiddenFiles > 0 ? [hiddenNote(hiddenFiles, "with matches")] : []),
        ...(verified.dropped > 0
          ? [
              `${plural(verified.dropped, "match", "matches")} not shown: the file changed or was replaced while it was searched (search again).`
            ]
          : []),
        ...result.notes,
        ...(result.skipped.length > 0 ? [skippedNote(result.skipped, (p) => displayPath(ctx.root, p))] : [])
      ]
      // The page is matches skip+1 … skip+n of the sorted list; `next` is where the following one starts.
      const next = skip + result.matches.length
      const metadata = {
        path: target,
        matches: result.total,
        files: result.files,
        shown: matches.length,
        truncated: next < result.total,
        ...(skip > 0 ? { offset: skip } : {}),
        ...(next < result.total ? { nextOffset: next } : {}),
        backend: result.backend,
        ...(hiddenFiles > 0 ? { hiddenFiles } : {})
      }
      if (skip > 0 && skip >= result.total && result.total > 0) {
        return yield* fail(
          `offset ${skip} is past the last match: ${JSON.stringify(pattern)} matches ${result.total} line${result.total === 1 ? "" : "s"} in ${where}${filter}. Use an offset below ${result.total}.`
        )
      }
      if (matches.length === 0) {
        return {
          title: `${title}: no matches`,
          output: [`No matches for ${JSON.stringify(pattern)} in ${where}${filter}.`, ...notes].join("\n"),
          metadata
        }
      }
      const lines = contentLines(matches, (p) => displayPath(ctx.root, p), before > 0 || after > 0)
      if (next < result.total) {
        const page = skip === 0 ? `${matches.length}` : `lines ${skip + 1}-${next}`
        lines.push(
          `(Showing ${page} of ${result.total} matching lines in ${plural(result.files, "file")}; ${result.total - next} more. Next page: offset=${next}${head_limit === undefined ? "" : `, head_limit=${head_limit}`}; or narrow with a more specific pattern, path or include.)`
        )
      } else if (skip > 0) {
        lines.push(
          `(Showing lines ${skip + 1}-${next} of ${result.total} matching lines in ${plural(result.files, "file")}: the last page.)`
        )
      }
      lines.push(...notes)
      return {
        title: `${title}: ${plural(result.total, "match", "matches")}`,
        output: lines.join("\n"),
        metadata
      }
    })
})
