/**
 * `output`: reads back a stored full output, the part the model's copy left out, by line
 * window or by regex, instead of re-running the command that produced it.
 */
import { Effect, FileSystem, Option, Schema } from "effect"
import { OutputStore } from "../output/store.ts"
import { linesInFile, linesInMemory, readStored } from "../output/stored-read.ts"
import { fail } from "../tool/errors.ts"
import { defineTool } from "../tool/tool.ts"

const DEFAULT_LIMIT = 200
const MAX_MATCHES = 100

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
      description:
        "A regex (RE2 syntax, as ripgrep): show only matching lines (with a line of context), instead of a window."
    })
  )
})

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
      const lines =
        entry.file === undefined ? linesInMemory(entry.text) : linesInFile(yield* FileSystem.FileSystem, entry.file)
      return yield* readStored(entry, lines, args, { limit: DEFAULT_LIMIT, maxMatches: MAX_MATCHES })
    })
})
