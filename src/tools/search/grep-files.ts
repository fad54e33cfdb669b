/**
 * grep's `files_with_matches` and `count` modes: one line per file with a match (`path`, or
 * `path:N` matching lines), sorted by path, paged over files with head_limit and offset.
 */
import { Effect } from "effect"
import { displayPath } from "../../path/path.ts"
import { plural } from "../../text/plural.ts"
import { fail, type ToolFailure } from "../../tool/errors.ts"
import type { ToolContext, ToolOutput } from "../../tool/tool.ts"
import type { GrepResult } from "./backend.ts"
import { skippedNote } from "./default-skip.ts"
import { fileEntries } from "./grep-output.ts"
import { hiddenNote } from "./visibility.ts"

export interface FilesPage {
  readonly ctx: ToolContext
  readonly pattern: string
  readonly where: string
  /** ` (files matching *.ts)` or "". */
  readonly filter: string
  readonly title: string
  readonly target: string
  readonly skip: number
  readonly limit: number
  /** As the caller gave it, to repeat in the next page's hint. */
  readonly head_limit: number | undefined
}

export const filesOrCounts = (
  mode: "files_with_matches" | "count",
  result: GrepResult,
  isHidden: (abs: string) => boolean,
  page: FilesPage
): Effect.Effect<ToolOutput, ToolFailure> => {
  const { ctx, pattern, where, filter, title, skip, limit } = page
  const entries = fileEntries(result.counts, isHidden)
  const hiddenFiles = result.counts.size - entries.length
  const total = entries.length
  const shown = entries.slice(skip, skip + limit)
  const next = skip + shown.length
  const lines = entries.reduce((n, [, c]) => n + c, 0)
  const notes = [
    ...(hiddenFiles > 0 ? [hiddenNote(hiddenFiles, "with matches")] : []),
    ...result.notes,
    ...(result.skipped.length > 0 ? [skippedNote(result.skipped, (p) => displayPath(ctx.root, p))] : [])
  ]
  const metadata = {
    path: page.target,
    mode,
    matches: lines,
    files: total,
    shown: shown.length,
    truncated: next < total,
    ...(skip > 0 ? { offset: skip } : {}),
    ...(next < total ? { nextOffset: next } : {}),
    backend: result.backend,
    ...(hiddenFiles > 0 ? { hiddenFiles } : {})
  }
  if (skip > 0 && skip >= total && total > 0) {
    return Effect.fail(
      fail(
        `offset ${skip} is past the last file: ${JSON.stringify(pattern)} matches in ${plural(total, "file")} in ${where}${filter}. Use an offset below ${total}.`
      )
    )
  }
  if (shown.length === 0) {
    return Effect.succeed({
      title: `${title}: no matches`,
      output: [`No matches for ${JSON.stringify(pattern)} in ${where}${filter}.`, ...notes].join("\n"),
      metadata
    })
  }
  const out = shown.map(([p, c]) => (mode === "count" ? `${displayPath(ctx.root, p)}:${c}` : displayPath(ctx.root, p)))
  if (next < total) {
    out.push(
      `(Showing ${skip === 0 ? `${shown.length}` : `files ${skip + 1}-${next}`} of ${total} files with matches; ${total - next} more. Next page: offset=${next}${page.head_limit === undefined ? "" : `, head_limit=${page.head_limit}`}; or narrow with a more specific pattern, path or include.)`
    )
  } else if (skip > 0) {
    out.push(`(Showing files ${skip + 1}-${next} of ${total} files with matches: the last page.)`)
  }
  out.push(...notes)
  return Effect.succeed({
    title: `${title}: ${plural(total, "file")}`,
    output: out.join("\n"),
    metadata
  })
}
