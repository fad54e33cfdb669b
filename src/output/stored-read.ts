/**
 * The `output` tool's line window and regex search over a stored output, one line at a time,
 * whether the output is in memory or spilled to a file (a 200 MB output is never one string).
 */
import { Effect, type FileSystem } from "effect"
import { plural } from "../text/plural.ts"
import { compileModelRegex, isRefusal } from "../text/regex.ts"
import { fail, type ToolFailure } from "../tool/errors.ts"
import { readableError } from "../tool/readable-error.ts"
import type { ToolOutput } from "../tool/tool.ts"
import { forEachSpilledLine } from "./spill.ts"
import type { StoredOutput } from "./store.ts"
import { splitLines } from "./truncate.ts"

/** Calls `f` with each line (no terminator) and its 0-based index, until `f` returns false. */
export type LineSource = (
  f: (line: string, index: number) => boolean
) => Effect.Effect<void, { readonly message: string }>

/** An output held in memory. Lines lose their terminators, so a pattern's `$` anchors at the end. */
export const linesInMemory =
  (text: string): LineSource =>
  (f) =>
    Effect.sync(() => {
      const lines = splitLines(text)
      for (let i = 0; i < lines.length; i++) if (!f(lines[i]!.replace(/\r?\n$/, ""), i)) return
    })

/** An output spilled to a file the store owns. */
export const linesInFile =
  (fs: FileSystem.FileSystem, path: string): LineSource =>
  (f) =>
    forEachSpilledLine(fs, path, f)

const CONTEXT = 1

const numbered = (line: string, n: number, width: number) => `${String(n).padStart(width)}\t${line}`

export const readStored = Effect.fnUntraced(function* (
  entry: StoredOutput,
  lines: LineSource,
  args: { readonly offset?: number; readonly limit?: number; readonly pattern?: string },
  defaults: { readonly limit: number; readonly maxMatches: number }
): Effect.fn.Return<ToolOutput, ToolFailure> {
  const total = entry.lines
  const width = String(total).length
  const dropped =
    entry.droppedBytes === undefined
      ? ""
      : ` (the last ${entry.droppedBytes} bytes were past the spill limit and were not kept)`
  const header = `output of ${entry.tool} call ${entry.id}: ${plural(total, "line")}, ${plural(entry.chars, "char")}${dropped}`
  const unreadable = (e: { readonly message: string }) =>
    fail(
      `The stored output of ${entry.id} could not be read (${readableError(e)}). Re-run the command that produced it.`
    )

  if (args.pattern !== undefined) {
    // A linear-time engine: a model's pattern never backtracks for ever on the event loop.
    const regex = compileModelRegex(args.pattern)
    if (isRefusal(regex)) return yield* fail(`Invalid regex ${JSON.stringify(args.pattern)}: ${regex.message}`)
    const from = (args.offset ?? 1) - 1
    const maxShown = args.limit ?? defaults.maxMatches
    const out: Array<string> = []
    let hits = 0
    let lastShownHit = -1
    let last = -1 // last line index written
    let previous: string | undefined
    let afterUntil = -1 // write lines up to this index as context after a hit
    yield* lines((line, i) => {
      const hit = i >= from && regex.test(line)
      if (hit) hits++
      const show = hit && hits <= maxShown
      if (show) {
        lastShownHit = i
        if (i - 1 > last && previous !== undefined && i - 1 >= 0) {
          if (last !== -1 && i - 1 > last + 1) out.push("--")
          out.push(numbered(previous, i, width))
          last = i - 1
        } else if (last !== -1 && i > last + 1) out.push("--")
        out.push(numbered(line, i + 1, width))
        last = i
        afterUntil = i + CONTEXT
      } else if (i <= afterUntil && i > last) {
        out.push(numbered(line, i + 1, width))
        last = i
      }
      previous = line
      return true
    }).pipe(Effect.mapError(unreadable))
    if (hits === 0) {
      return {
        title: `output ${entry.id}: no match`,
        output: `${header}\nNo line matches /${args.pattern}/.`,
        metadata: { matches: 0 }
      }
    }
    const shown = Math.min(hits, maxShown)
    const more =
      hits > shown
        ? [`(${hits - shown} more matching lines; continue with offset=${lastShownHit + 2} or a narrower pattern)`]
        : []
    return {
      title: `output ${entry.id}: ${plural(hits, "matching line")}`,
      output: [header, ...out, ...more].join("\n"),
      metadata: { matches: hits, shown }
    }
  }

  const offset = args.offset ?? 1
  if (offset > total) {
    return yield* fail(`offset ${offset} is past the end: the stored output has ${plural(total, "line")}.`)
  }
  const end = Math.min(total, offset - 1 + (args.limit ?? defaults.limit))
  const body: Array<string> = []
  yield* lines((line, i) => {
    if (i >= offset - 1) body.push(numbered(line, i + 1, width))
    return i + 1 < end
  }).pipe(Effect.mapError(unreadable))
  const rest = end < total ? [`(lines ${offset}–${end} of ${total}; continue with offset=${end + 1})`] : []
  return {
    title: `output ${entry.id}: lines ${offset}–${end}`,
    output: [header, ...body, ...rest].join("\n"),
    metadata: { startLine: offset, endLine: end, totalLines: total }
  }
})
