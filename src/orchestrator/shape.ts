/**
 * shape: the model's and the UI's copies of a recorded output, within the tool's budget.
 * Content-aware compression by the declared output kind when it is on (a timeout's partial
 * output too); else the head+tail cut with a marker naming the omitted range. A spilled output
 * is read line by line from the store's file, never whole.
 */
import { Effect, type FileSystem } from "effect"
import { compressForModel, compressSpilled, spilledLines } from "../output/compress/index.ts"
import { omittedMarker } from "../output/omitted-marker.ts"
import type { OutputView } from "../output/spill.ts"
import type { OutputStore, PutResult } from "../output/store.ts"
import { adaptiveTruncate, countLines, tailCap } from "../output/truncate.ts"
import { truncateSpilled } from "../output/truncate-spilled.ts"
import type { Tool } from "../tool/tool.ts"
import { cut, type Shaped } from "./cut.ts"
import type { Recorded } from "./record.ts"

export interface ShapeSettings {
  readonly maxChars: number
  readonly maxLines: number
  readonly uiMaxChars: number
  /** Content-aware compression (FREECODE_BASH_COMPRESS). */
  readonly compress: boolean
  readonly store: OutputStore["Service"]
  readonly fs: FileSystem.FileSystem
}

export interface ShapeInput {
  readonly sessionId: string
  readonly callId: string
  /** Undefined for a call that never resolved to a tool. */
  readonly tool: Tool | undefined
  /** The kind of output the tool declared for these arguments. */
  readonly outputKind: string | undefined
  /** The call failed (an error, a non-zero exit, a stop): compression keeps its failure lines whatever its kind. */
  readonly failed: boolean
}

interface ShapeOptions {
  readonly callId: string
  readonly stored: PutResult
  readonly maxChars: number
  readonly maxLines: number
  readonly uiMaxChars: number
  readonly direction: Tool["truncate"]
}

/** The model's and the UI's copies of an output too large to hold, from its two ends. */
const shapeSpilled = (view: Extract<OutputView, { kind: "spilled" }>, options: ShapeOptions): Shaped => {
  const cut = truncateSpilled(view, { ...options, marker: omittedMarker(options.callId, options.stored) })
  return { modelOutput: cut.text, uiOutput: tailCap(view.tail, options.uiMaxChars), truncated: cut.truncated }
}

const uncompressed = (view: OutputView, lines: number, options: ShapeOptions): Shaped =>
  view.kind === "text" ? cut({ text: view.text, ...options, lines }) : shapeSpilled(view, options)

/** The model's budget for one result: the tool may ask for less than the user's ceiling, never more. */
export const budgetOf = (settings: ShapeSettings, tool: Tool | undefined): number =>
  Math.min(tool?.maxResultSizeChars ?? settings.maxChars, settings.maxChars)

export const shapeOutput = (
  settings: ShapeSettings,
  input: ShapeInput,
  recorded: Recorded,
  maxChars: number = budgetOf(settings, input.tool)
): Effect.Effect<Shaped> => {
  const { view, stored, lines } = recorded
  const { tool, outputKind } = input
  const options: ShapeOptions = {
    callId: input.callId,
    stored,
    maxChars,
    maxLines: settings.maxLines,
    uiMaxChars: settings.uiMaxChars,
    direction: tool?.truncate ?? "both"
  }
  if (!settings.compress || outputKind === undefined) return Effect.succeed(uncompressed(view, lines, options))
  const withUi = (compressed: Omit<Shaped, "uiOutput"> | undefined): Shaped =>
    compressed === undefined
      ? uncompressed(view, lines, options)
      : { ...compressed, uiOutput: tailCap(view.kind === "text" ? view.text : view.tail, settings.uiMaxChars) }
  const compressing = { ...options, failed: input.failed }
  if (view.kind === "text") return Effect.succeed(withUi(compressForModel(outputKind, view.text, compressing)))
  return Effect.flatMap(spilledLines(settings.store, settings.fs, input.sessionId, input.callId), (source) =>
    Effect.map(compressSpilled(outputKind, view, source, compressing), withUi)
  )
}

/** The id a hook's text is stored under when it does not fit the model's copy whole. */
export const hookOutputId = (callId: string): string => `${callId}.hooks`

const SEPARATOR = "\n\n"

/**
 * The model's copy with the hooks' text (PreToolUse context, PostToolUse feedback) joined in,
 * within the same budget as the tool's output alone: the hooks get up to half of it, the
 * tool's output is shaped again into what is left when it needs more room, and a hook text
 * that still does not fit is cut with a marker naming the `output` call that reads it whole
 * (stored as `<call id>.hooks`; the tool's own output stays under the call id).
 */
export const joinHooks = (
  settings: ShapeSettings,
  input: ShapeInput,
  recorded: Recorded,
  toolShaped: Shaped,
  texts: ReadonlyArray<string>
): Effect.Effect<Shaped> => {
  if (texts.length === 0) return Effect.succeed(toolShaped)
  const hookText = texts.map((t) => `[hook] ${t}`).join(SEPARATOR)
  const budget = budgetOf(settings, input.tool)
  const share = Math.min(hookText.length + SEPARATOR.length, Math.floor(budget / 2))
  const toolPart =
    toolShaped.modelOutput.length + share <= budget
      ? Effect.succeed(toolShaped)
      : shapeOutput(settings, input, recorded, budget - share)
  return Effect.flatMap(toolPart, (shaped) => {
    const before = shaped.modelOutput === "" ? "" : `${shaped.modelOutput}${SEPARATOR}`
    const room = Math.max(0, budget - before.length)
    const lines = countLines(hookText)
    const lineRoom = Math.max(1, settings.maxLines - countLines(shaped.modelOutput))
    if (hookText.length <= room && lines <= lineRoom)
      return Effect.succeed({ ...shaped, modelOutput: `${before}${hookText}` })
    const id = hookOutputId(input.callId)
    return Effect.map(
      settings.store.put({ sessionId: input.sessionId, id, tool: input.tool?.id ?? "hooks", text: hookText, lines }),
      (stored): Shaped => {
        const cut = adaptiveTruncate(hookText, {
          maxChars: room,
          maxLines: lineRoom,
          direction: "head",
          marker: omittedMarker(id, stored),
          lines
        })
        return { ...shaped, modelOutput: `${before}${cut.text}`, truncated: true }
      }
    )
  })
}
