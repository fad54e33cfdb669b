/**
 * `edit`: replace one piece of a file. The match runs through the replacer cascade
 * (src/edit/apply.ts): exact first, then rules that forgive indentation, whitespace, escaping
 * and a stale line, and refuse whenever more than one place could be meant. The model gets a
 * short confirmation; UIs get a unified diff in metadata.
 */
import { Effect, FileSystem, type PlatformError, Schema } from "effect"
import { applyEditToBytes } from "../edit/apply.ts"
import { unifiedDiff } from "../edit/diff.ts"
import { describeChange, stillKnown } from "../edit/file-state.ts"
import { normalizeInput } from "../edit/text.ts"
import { pathProblem } from "../edit/write-access.ts"
import { WriteFs } from "../edit/write-fs.ts"
import { appendErrorsAfterEdit } from "../lsp/after-edit.ts"
import { countLines } from "../output/truncate.ts"
import { displayPath, resolvePath } from "../path/path.ts"
import { fail } from "../tool/errors.ts"
import { WRITES_FILES } from "../tool/presets.ts"
import { defineTool } from "../tool/tool.ts"
import { fsFailure, notFoundMessage, writeFailures } from "./failures/fs.ts"

const Parameters = Schema.Struct({
  filePath: Schema.String.annotate({ description: "File to edit, absolute or relative to the project root." }),
  oldString: Schema.String.annotate({
    description:
      "The text to replace, copied from the file (without read's line-number prefix). Empty: create a new file."
  }),
  newString: Schema.String.annotate({ description: "The text to put in its place." }),
  replaceAll: Schema.optionalKey(
    Schema.Boolean.annotate({ description: "Replace every match (default false: oldString must match one place)." })
  )
})

/** Lines of the edited region shown back when the match was loose. */
const SHOWN_LINES = 12

const excerpt = (text: string, firstLine: number, count: number): string => {
  const lines = text.split("\n")
  const from = Math.max(1, firstLine)
  const to = Math.min(lines.length, from + Math.min(count, SHOWN_LINES) - 1)
  const width = String(to).length
  const out: Array<string> = []
  for (let n = from; n <= to; n++) out.push(`${String(n).padStart(width)}\t${lines[n - 1]}`)
  return out.join("\n")
}

export const EditTool = defineTool({
  id: "edit",
  description:
    "Replace text in a file: oldString (copied from the file, with enough lines to match one place) becomes newString; replaceAll changes every match. Small slips in indentation, whitespace or escaping are tolerated and newString is fitted to the file; when more than one place could be meant, nothing is changed. An empty oldString creates a new file.",
  parameters: Parameters,
  ...WRITES_FILES,
  // As named: the permission check finds where it lands (links followed, through LocalFs), and
  // the write itself through WriteFs, so nothing here asks the host's disk.
  paths: ({ filePath }, ctx) => [resolvePath(ctx.root, filePath)],
  validateInput: ({ filePath }) => {
    const problem = pathProblem(filePath)
    return problem === undefined ? Effect.void : Effect.fail(fail(problem))
  },
  execute: ({ filePath, oldString, newString, replaceAll }, ctx) =>
    Effect.gen(function* () {
      const fs = yield* FileSystem.FileSystem
      const writes = yield* WriteFs
      const abs = resolvePath(ctx.root, filePath)
      const shown = displayPath(ctx.root, abs)
      if (oldString === newString) {
        return yield* fail(
          "oldString and newString are identical, so there is nothing to change. Send the text as it should read after the edit in newString."
        )
      }
      const toFailure = (e: PlatformError.PlatformError) => fsFailure(e, ctx.root, abs)
      const request = {
        sessionId: ctx.sessionId,
        root: ctx.root,
        by: "edit",
        paths: [abs],
        checked: ctx.checked
      } as const
      return yield* writes
        .transaction(request, (tx) =>
          Effect.gen(function* () {
            const { file: loaded, seen } = yield* tx.load(abs).pipe(Effect.mapError(toFailure))
            if (loaded === undefined) {
              if (oldString !== "") return yield* fail(yield* notFoundMessage(fs, ctx.root, abs))
              const text = normalizeInput(newString)
              yield* tx.write(abs, new TextEncoder().encode(newString), true).pipe(Effect.mapError(toFailure))
              const diff = unifiedDiff(shown, "", text)
              return {
                title: `${shown} (created)`,
                output: `Created ${shown} (${countLines(text)} line${countLines(text) === 1 ? "" : "s"}).`,
                metadata: { path: abs, created: true, diff: diff.diff, additions: diff.additions, deletions: 0 }
              }
            }
            const { bytes, type, view } = loaded
            if (type === "Directory") return yield* fail(`${shown} is a directory; edit changes files.`)
            if (type !== "File") return yield* fail(`${shown} is not a regular file (${type}).`)
            const outcome = applyEditToBytes(bytes, {
              oldString,
              newString,
              ...(replaceAll === undefined ? {} : { replaceAll })
            })
            if (outcome._tag !== "Applied") {
              return yield* fail(`${shown}: ${outcome.message}`, {
                reason: outcome._tag,
                ...(outcome._tag === "Ambiguous" ? { lines: outcome.lines } : {})
              })
            }
            const change = seen === undefined ? undefined : describeChange(seen, view)
            yield* tx.write(abs, outcome.bytes, stillKnown(seen, change)).pipe(Effect.mapError(toFailure))

            const after = outcome.text
            const diff = unifiedDiff(shown, outcome.before, after)
            const where =
              outcome.count === 1
                ? `at line ${outcome.lines[0]}`
                : `in ${outcome.count} places (lines ${outcome.lines.join(", ")})`
            const output = [`Edited ${shown} ${where}: +${diff.additions} -${diff.deletions} lines.`]
            if (outcome.replacer !== "simple" && outcome.replacer !== "multiOccurrence") {
              const newLines = normalizeInput(newString).split("\n").length
              output.push(
                `oldString was not exact; it matched by ${outcome.replacer} and newString was fitted to the file. The edited lines now read:`,
                excerpt(after, outcome.lines[0]!, newLines)
              )
            }
            if (change !== undefined) {
              output.push(
                `Warning: ${shown} ${change}. The edit matched its current text, but read the file again before relying on other parts of it.`
              )
            }
            return {
              title: `${shown} (edited)`,
              output: output.join("\n"),
              metadata: {
                path: abs,
                replacer: outcome.replacer,
                replacements: outcome.count,
                lines: outcome.lines,
                diff: diff.diff,
                additions: diff.additions,
                deletions: diff.deletions,
                ...(change === undefined ? {} : { staleWarning: change })
              }
            }
          })
        )
        .pipe(writeFailures(toFailure))
    }).pipe(Effect.flatMap((out) => appendErrorsAfterEdit(out, [resolvePath(ctx.root, filePath)], ctx.root)))
})
