/**
 * Content-aware compression of the model's copy (FREECODE_BASH_COMPRESS=1; off by default).
 * It runs in the orchestrator after the store put, like every other cap, keyed off
 * metadata.outputKind: diffs and file contents pass through, search results only collapse
 * identical lines, build/test logs keep their head, tail and failure lines. ANSI codes are
 * stripped from the model's copy in every class. The result is then held to the usual budget.
 */
import { Config } from "effect"
import { omittedMarker } from "../../orchestrator/shape.ts"
import type { TruncateDirection } from "../../tool/tool.ts"
import type { PutResult } from "../store.ts"
import { adaptiveTruncate, countLines, splitLines } from "../truncate.ts"
import { stripAnsi } from "./ansi.ts"
import { compressLog } from "./log.ts"
import { collapseDuplicates } from "./search.ts"

export { stripAnsi } from "./ansi.ts"
export { classifyCommand, type OutputKind } from "./classify.ts"
export { compressLog, isFailureLine } from "./log.ts"
export { collapseDuplicates } from "./search.ts"

export const COMPRESS_NAME = "FREECODE_BASH_COMPRESS"

/** Read once, when the orchestrator's layer is built. */
export const compressEnabledConfig = Config.Boolean(COMPRESS_NAME).pipe(Config.withDefault(false))

export interface CompressOptions {
  readonly callId: string
  readonly stored: PutResult
  readonly maxChars: number
  readonly maxLines: number
  readonly direction: TruncateDirection
}

const n = (x: number) => x.toLocaleString("en-US")

/** The model's copy of `text` for an output of `kind`; undefined for a kind it does not know. */
export const compressForModel = (
  kind: string,
  text: string,
  options: CompressOptions
): { readonly modelOutput: string; readonly truncated: boolean } | undefined => {
  if (!["diff", "cat", "search", "log", "other"].includes(kind)) return undefined
  const clean = stripAnsi(text)
  const marker = omittedMarker(options.callId, options.stored)
  const budget = { maxChars: options.maxChars, maxLines: options.maxLines, direction: options.direction }

  // Diffs, file contents and unknown output: only the colour goes; line numbers stay the stored ones.
  if (kind === "diff" || kind === "cat" || kind === "other") {
    const cut = adaptiveTruncate(clean, { ...budget, marker })
    return { modelOutput: cut.text, truncated: cut.truncated || clean !== text }
  }

  const lines = splitLines(clean)
  const shaped = kind === "search" ? collapseDuplicates(lines) : compressLog(lines, marker)
  if (shaped.text.length <= options.maxChars && countLines(shaped.text) <= options.maxLines) {
    return { modelOutput: shaped.text, truncated: shaped.collapsed || clean !== text }
  }
  // Still over budget: cut the compressed copy. Its line numbers are not the stored output's,
  // so this marker points at a search instead of a line window.
  const total = countLines(clean)
  const id = JSON.stringify(options.callId)
  const cut = adaptiveTruncate(shaped.text, {
    ...budget,
    marker: (r) =>
      options.stored.stored
        ? `[… ${n(r.toLine - r.fromLine + 1)} more lines of this shortened copy omitted. The full output has ${n(total)} lines: search it with output {"id": ${id}, "pattern": "<regex>"} …]`
        : `[… ${n(r.toLine - r.fromLine + 1)} more lines omitted. The full output was not kept (${options.stored.reason}); re-run with a narrower command …]`
  })
  return { modelOutput: cut.text, truncated: true }
}
