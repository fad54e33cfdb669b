/**
 * Errors in a file right after edit/write/apply_patch changed it, for those tools to append to
 * their result (opt-in: FREECODE_LSP_DIAGNOSTICS_AFTER_EDIT=true). Never fails: a file with no
 * language server, or a server that cannot answer, simply adds nothing.
 */
import { Config, Effect, Option } from "effect"
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

/**
 * The file's errors (severity error only, at most `max`) as text to append, or undefined when
 * there are none or no server could say.
 */
export const errorsAfterEdit = (
  path: string,
  projectRoot: string,
  max = MAX_ERRORS_AFTER_EDIT
): Effect.Effect<string | undefined, never, LspClients> =>
  Effect.gen(function* () {
    const lsp = yield* LspClients
    const doc = yield* lsp.open(path, projectRoot)
    const errors = (yield* lsp.diagnostics(doc)).filter((d) => (d.severity ?? 1) === 1)
    if (errors.length === 0) return undefined
    const src = new LineSource(projectRoot, new Map([[doc.uri, doc.text]]))
    const shown = formatDiagnostics(src, doc.uri, errors.slice(0, max))
    const more = errors.length > max ? `\n(${errors.length - max} more errors; run lsp diagnostics for all.)` : ""
    return `Errors in this file now:\n${shown}${more}`
  }).pipe(Effect.catch(() => Effect.succeed(undefined)))

/**
 * What edit, write and apply_patch return: their own output, plus each changed file's errors
 * when FREECODE_LSP_DIAGNOSTICS_AFTER_EDIT is on, so the model sees a break it just made.
 * Language servers are optional: without LspClients in the context, nothing is added.
 */
export const appendErrorsAfterEdit = (
  output: ToolOutput,
  paths: ReadonlyArray<string>,
  projectRoot: string
): Effect.Effect<ToolOutput> =>
  Effect.gen(function* () {
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
