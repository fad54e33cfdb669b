/**
 * Errors an edit/write/apply_patch just introduced in a file, for those tools to append to
 * their result (opt-in: FREECODE_LSP_DIAGNOSTICS_AFTER_EDIT=true). Never fails: a file with no
 * language server, or a server that cannot answer, simply adds nothing.
 */
import { Config, Effect, Option } from "effect"
import type { Diagnostic } from "vscode-languageserver-protocol"
import type { ToolOutput } from "../tool/tool.ts"
import { formatDiagnostics, LineSource } from "./format.ts"
import { LspClients } from "./service.ts"

/** Whether edit tools append the file's errors; default off (it costs a server round trip per edit). */
export const diagnosticsAfterEditEnabled: Effect.Effect<boolean> = Config.Boolean(
  "FREECODE_LSP_DIAGNOSTICS_AFTER_EDIT"
).pipe(
  Config.withDefault(false),
  Effect.catch(() => Effect.succeed(false))
)

export const MAX_ERRORS_AFTER_EDIT = 10

const isError = (d: Diagnostic) => (d.severity ?? 1) === 1

/** What makes two errors the same one across an edit that may have moved it: code, message and its line's text. */
const identity = (d: Diagnostic, text: string): string =>
  JSON.stringify([d.code ?? null, d.message, (text.split(/\r?\n/)[d.range.start.line] ?? "").trim()])

/**
 * The errors the edit introduced (severity error only, at most `max`) as text to append, or
 * undefined when there are none or no server could say. "Introduced" is measured against the
 * file as its server last saw it (an earlier edit or lsp call); a file no server has seen yet in
 * this session has no such baseline, so all its errors are listed, under a heading that says so.
 */
export const errorsAfterEdit = (
  path: string,
  projectRoot: string,
  max = MAX_ERRORS_AFTER_EDIT
): Effect.Effect<string | undefined, never, LspClients> =>
  Effect.gen(function* () {
    const lsp = yield* LspClients
    const before = yield* lsp.known(path, projectRoot)
    // The errors of the text the server still has, before it hears of the change (none if it cannot say).
    const previous = before === undefined ? Option.none() : yield* Effect.option(lsp.diagnostics(before))
    const baseline = new Map<string, number>()
    for (const d of Option.getOrElse(previous, () => []).filter(isError)) {
      const key = identity(d, before!.text)
      baseline.set(key, (baseline.get(key) ?? 0) + 1)
    }
    const doc = yield* lsp.open(path, projectRoot)
    const all = (yield* lsp.diagnostics(doc)).filter(isError)
    const errors = all.filter((d) => {
      const key = identity(d, doc.text)
      const left = baseline.get(key) ?? 0
      if (left > 0) baseline.set(key, left - 1)
      return left === 0
    })
    if (errors.length === 0) return undefined
    const src = new LineSource(projectRoot, new Map([[doc.uri, doc.text]]))
    const shown = formatDiagnostics(src, doc.uri, errors.slice(0, max))
    const old = all.length - errors.length
    const notes = [
      ...(errors.length > max ? [`${errors.length - max} more new errors; run lsp diagnostics for all.`] : []),
      ...(old === 1 ? ["1 error that was there before is not shown."] : []),
      ...(old > 1 ? [`${old} errors that were there before are not shown.`] : [])
    ]
    const heading = Option.isSome(previous) ? "New errors in this file:" : "Errors in this file now:"
    return [heading, shown, ...notes.map((n) => `(${n})`)].join("\n")
  }).pipe(Effect.catch(() => Effect.succeed(undefined)))

/**
 * What edit, write and apply_patch return: their own output, plus each changed file's new errors
 * when FREECODE_LSP_DIAGNOSTICS_AFTER_EDIT is on, so the model sees a break it just made.
 * Language servers are optional: without LspClients in the context, nothing is added.
 */
export const appendErrorsAfterEdit = Effect.fnUntraced(function* (
  output: ToolOutput,
  paths: ReadonlyArray<string>,
  projectRoot: string
): Effect.fn.Return<ToolOutput> {
  const lsp = yield* Effect.serviceOption(LspClients)
  if (Option.isNone(lsp) || !(yield* diagnosticsAfterEditEnabled)) return output
  const found = yield* Effect.forEach(paths, (path) =>
    errorsAfterEdit(path, projectRoot).pipe(Effect.provideService(LspClients, lsp.value))
  )
  const notes = found.filter((text): text is string => text !== undefined)
  if (notes.length === 0) return output
  return {
    ...output,
    output: [output.output, ...notes].join("\n\n"),
    metadata: { ...output.metadata, filesWithErrors: notes.length }
  }
})
