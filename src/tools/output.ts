/**
 * `output`: reads back a stored full output, the part the model's copy left out, by line
 * window or by regex, instead of re-running the command that produced it.
 */
import { Effect, FileSystem, Option, Schema } from "effect"
import { readSpilled } from "../output/spilled-read.ts"
import { OutputStore } from "../output/store.ts"
import { splitLines } from "../output/truncate.ts"
import { fail } from "../tool/errors.ts"
import { defineTool } from "../tool/tool.ts"

const DEFAULT_LIMIT = 200
const MAX_MATCHES = 100
const CONTEXT = 1

const Parameters = Schema.Struct({
  id: Schema.String.annotate({
    description: "The id named in an omitted-lines marker (the call id of the earlier result)."
  }),
  offset: Schema.optionalKey(
    Schema.Int.check(Schema.isGreaterThan(0)).annotate({ description: "First line to show, 1-based." })
  ),
  limit: Schema.optionalKey(
    Schema.Int.check(Schema.isGreaterThan(0)).annotate({ description: `Lines to show (default ${DEFAULT_LIMIT}).` })
  ),
  pattern: Schema.optionalKey(
    Schema.String.annotate({
      description: "A JavaScript regex: show only matching lines (with a line of context), instead of a window."
    })
  )
})

const numbered = (lines: ReadonlyArray<string>, first: number, width: number) =>
  lines.map((line, i) => `${String(first + i).padStart(width)}\t${line}`)

export const OutputTool = defineTool({
  id: "output",
  description:
    "Read the part of an earlier tool result that was cut from your copy. Give the id from the omitted-lines marker and either a line window (offset, limit) or a regex pattern.",
  parameters: Parameters,
  concurrencySafe: true,
  retrySafe: true,
  interruptBehavior: "cancel",
  truncate: "head",
  permissions: { operations: ["session.read"] },
  execute: (args, ctx) =>
    Effect.gen(function* () {
      const store = yield* OutputStore
      const found = yield* store.get(ctx.sessionId, args.id)
      if (Option.isNone(found)) {
        return yield* fail(
          `No stored output with id "${args.id}" in this session (it may have been evicted to make room). Re-run the tool that produced it, with a narrower command if you can.`
        )
      }
      const entry = found.value
      // Too large for memory: read from the store's file, line by line.
      if (entry.file !== undefined) {
        const fs = yield* FileSystem.FileSystem
        return yield* readSpilled(fs, { ...entry, file: entry.file }, args, {
          limit: DEFAULT_LIMIT,
          maxMatches: MAX_MATCHES
        })
      }
      // Without terminators, so a pattern's `$` anchors at the end of the line's text.
      const lines = splitLines(entry.text).map((line) => line.replace(/\r?\n$/, ""))
      const width = String(lines.length).length
      const header = `output of ${entry.tool} call ${entry.id}: ${lines.length} lines, ${entry.chars} chars`

      if (args.pattern !== undefined) {
        let regex: RegExp
        try {
          regex = new RegExp(args.pattern)
        } catch (e) {
          return yield* fail(
            `Invalid regex ${JSON.stringify(args.pattern)}: ${(e as Error).message}. Escape special characters or simplify it.`
          )
        }
        const from = (args.offset ?? 1) - 1
        const hits: Array<number> = []
        for (let i = from; i < lines.length; i++) if (regex.test(lines[i]!)) hits.push(i)
        if (hits.length === 0) {
          return {
            title: `output ${args.id}: no match`,
            output: `${header}\nNo line matches /${args.pattern}/.`,
            metadata: { matches: 0 }
          }
        }
        const shown = hits.slice(0, args.limit ?? MAX_MATCHES)
        const out: Array<string> = []
        let last = -1
        for (const hit of shown) {
          const start = Math.max(hit - CONTEXT, last + 1)
          const end = Math.min(hit + CONTEXT, lines.length - 1)
          if (last !== -1 && start > last + 1) out.push("--")
          out.push(...numbered(lines.slice(start, end + 1), start + 1, width))
          last = end
        }
        const more =
          hits.length > shown.length
            ? [
                `(${hits.length - shown.length} more matching lines; continue with offset=${shown[shown.length - 1]! + 2} or a narrower pattern)`
              ]
            : []
        return {
          title: `output ${args.id}: ${hits.length} matching lines`,
          output: [header, ...out, ...more].join("\n"),
          metadata: { matches: hits.length, shown: shown.length }
        }
      }

      const offset = args.offset ?? 1
      if (offset > lines.length) {
        return yield* fail(`offset ${offset} is past the end: the stored output has ${lines.length} lines.`)
      }
      const end = Math.min(lines.length, offset - 1 + (args.limit ?? DEFAULT_LIMIT))
      const body = numbered(lines.slice(offset - 1, end), offset, width)
      const rest =
        end < lines.length ? [`(lines ${offset}–${end} of ${lines.length}; continue with offset=${end + 1})`] : []
      return {
        title: `output ${args.id}: lines ${offset}–${end}`,
        output: [header, ...body, ...rest].join("\n"),
        metadata: { startLine: offset, endLine: end, totalLines: lines.length }
      }
    })
})
