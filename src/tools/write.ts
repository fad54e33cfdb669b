/**
 * `write`: create a file or replace all of it. Replacing is refused unless the session has the
 * file's current content (it read or wrote it, and it has not changed since, by content hash;
 * an edit of a file never read does not count): otherwise the write would silently destroy a
 * change nobody has seen. The replaced file's BOM
 * and CRLF line endings are kept when the new content does not state its own.
 */
import { Effect, type PlatformError, Schema } from "effect"
import { unifiedDiff } from "../edit/diff.ts"
import { describeChange } from "../edit/file-state.ts"
import { decodeText, looksBinary } from "../edit/text.ts"
import { pathProblem } from "../edit/write-access.ts"
import { WriteFs } from "../edit/write-fs.ts"
import { appendErrorsAfterEdit } from "../lsp/after-edit.ts"
import { countLines } from "../output/truncate.ts"
import { displayPath, resolvePath } from "../path/path.ts"
import { plural } from "../text/plural.ts"
import { fail } from "../tool/errors.ts"
import { WRITES_FILES } from "../tool/presets.ts"
import { defineTool } from "../tool/tool.ts"
import { fsFailure, writeFailures } from "./failures/fs.ts"

const Parameters = Schema.Struct({
  filePath: Schema.String.annotate({ description: "File to write, absolute or relative to the project root." }),
  content: Schema.String.annotate({ description: "The whole new content of the file." })
})

const BOM = "\uFEFF"
const encoder = new TextEncoder()

/** The content as bytes, in the replaced file's conventions where the content states none. */
export const withConventions = (content: string, previous: Uint8Array | undefined): Uint8Array => {
  if (previous === undefined || looksBinary(previous)) return encoder.encode(content)
  const old = decodeText(previous)
  let text = content
  if (old.eol === "\r\n" && !text.includes("\r\n")) text = text.replace(/\n/g, "\r\n")
  if (old.bom && !text.startsWith(BOM)) text = BOM + text
  return encoder.encode(text)
}

export const WriteTool = defineTool({
  id: "write",
  description:
    "Create a file, or replace all of an existing one (read it first; refused if it changed since). Creates missing parent folders. To change part of a file, use edit.",
  parameters: Parameters,
  ...WRITES_FILES,
  // As named: the permission check finds where it lands (links followed, through LocalFs), and
  // the write itself through WriteFs, so nothing here asks the host's disk.
  paths: ({ filePath }, ctx) => [resolvePath(ctx.root, filePath)],
  validateInput: ({ filePath }) => {
    const problem = pathProblem(filePath)
    return problem === undefined ? Effect.void : Effect.fail(fail(problem))
  },
  execute: ({ filePath, content }, ctx) =>
    Effect.gen(function* () {
      const writes = yield* WriteFs
      const abs = resolvePath(ctx.root, filePath)
      const shown = displayPath(ctx.root, abs)
      const toFailure = (e: PlatformError.PlatformError) => fsFailure(e, ctx.root, abs)
      const request = {
        sessionId: ctx.sessionId,
        root: ctx.root,
        by: "write",
        paths: [abs],
        checked: ctx.checked
      } as const
      return yield* writes
        .transaction(request, (tx) =>
          Effect.gen(function* () {
            // Loaded under the lock: the stale check below sees every write that came before.
            const { file: loaded, seen } = yield* tx.load(abs).pipe(Effect.mapError(toFailure))
            let before = ""
            if (loaded !== undefined) {
              const { type, view, bytes } = loaded
              if (type === "Directory") return yield* fail(`${shown} is a directory; give a file path.`)
              if (type !== "File") return yield* fail(`${shown} is not a regular file (${type}).`)
              if (seen === undefined) {
                return yield* fail(
                  `${shown} already exists and has not been read in this session, so write would replace content you have not seen. Read it first, then write; or use edit to change part of it.`
                )
              }
              const change = describeChange(seen, view)
              if (change !== undefined) {
                return yield* fail(
                  `${shown} ${change}, so write would discard that change. Read it again, then write (or use edit for a part of it).`
                )
              }
              if (!seen.known) {
                return yield* fail(
                  `${shown} has been changed with ${seen.by} in this session but not read, so write would replace content you have not seen. Read it first, then write; or use edit to change part of it.`
                )
              }
              before = looksBinary(bytes) ? "" : decodeText(bytes).text
            }
            const previous = loaded?.bytes
            const bytes = withConventions(content, previous)
            yield* tx.write(abs, bytes, true).pipe(Effect.mapError(toFailure))
            const after = decodeText(bytes).text
            const diff = unifiedDiff(shown, before, after)
            const created = loaded === undefined
            return {
              title: `${shown} (${created ? "created" : "written"})`,
              output: `${created ? "Created" : "Wrote"} ${shown} (${plural(countLines(after), "line")}, ${plural(bytes.length, "byte")}${created ? "" : `; +${diff.additions} -${diff.deletions} lines`}).`,
              metadata: {
                path: abs,
                created,
                bytes: bytes.length,
                diff: diff.diff,
                additions: diff.additions,
                deletions: diff.deletions
              }
            }
          })
        )
        .pipe(writeFailures(toFailure))
    }).pipe(Effect.flatMap((out) => appendErrorsAfterEdit(out, [resolvePath(ctx.root, filePath)], ctx.root)))
})
