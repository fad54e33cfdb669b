/**
 * Content-aware compression of the model's copy (FREECODE_BASH_COMPRESS=1; off by default).
 * It runs in the orchestrator after the store put, like every other cap, keyed off the kind of
 * output the tool declares (`outputKind`, bash's classifyCommand): diffs and file contents pass
 * through, search results only collapse identical lines, build/test logs keep their head, tail
 * and failure lines. ANSI codes are stripped from the model's copy in every class. The same
 * streaming pass shapes an output held in memory and one spilled to a file (read line by line,
 * never whole), so memory stays bounded by the model's budget whatever the output's size.
 */
import { Config, Effect, type FileSystem, Option } from "effect"
import { headOf, tailOf } from "../../text/cut.ts"
import { OUTPUT_KINDS, type OutputKind, type TruncateDirection } from "../../tool/tool.ts"
import { omittedMarker } from "../omitted-marker.ts"
import type { OutputView } from "../spill.ts"
import type { OutputStore, PutResult } from "../store.ts"
import { type LineSource, linesInFile } from "../stored-read.ts"
import { adaptiveTruncate, countLines } from "../truncate.ts"
import { truncateSpilled } from "../truncate-spilled.ts"
import { stripAnsi } from "./ansi.ts"
import { isStrongFailureLine, logPass, looksLikeLog } from "./log.ts"
import type { Compressed, LineSink, PassOptions } from "./pass.ts"
import { searchPass } from "./search.ts"

export { stripAnsi } from "./ansi.ts"
export { classifyCommand } from "./classify.ts"
export { isFailureLine, isStrongFailureLine, isWarningLine, logPass, looksLikeLog } from "./log.ts"
export type { Compressed, LineSink } from "./pass.ts"
export { searchPass } from "./search.ts"

export const COMPRESS_NAME = "FREECODE_BASH_COMPRESS"

/** Read once, when the orchestrator's layer is built. */
export const compressEnabledConfig = Config.Boolean(COMPRESS_NAME).pipe(Config.withDefault(false))

export interface CompressOptions {
  readonly callId: string
  readonly stored: PutResult
  readonly maxChars: number
  readonly maxLines: number
  readonly direction: TruncateDirection
  /** The call failed (a non-zero exit, a timeout, a cancel): its failure lines are kept whatever its kind. */
  readonly failed?: boolean
}

export interface ModelCopy {
  readonly modelOutput: string
  readonly truncated: boolean
}

const KINDS: ReadonlySet<string> = new Set<OutputKind>(OUTPUT_KINDS)

const n = (x: number) => x.toLocaleString("en-US")

const passFor = (kind: "search" | "log", options: PassOptions): LineSink =>
  kind === "search" ? searchPass(options) : logPass(options)

/** Visits the lines of `text`, terminators kept, without building an array of them. */
const forEachLine = (text: string, f: (line: string) => void): void => {
  let start = 0
  for (let nl = text.indexOf("\n"); nl !== -1; nl = text.indexOf("\n", start)) {
    f(text.slice(start, nl + 1))
    start = nl + 1
  }
  if (start < text.length) f(text.slice(start))
}

/**
 * A pass's result, held to the budget once more if a line count, long lines or collapsed
 * counts still leave it over. Its line numbers are not the stored output's, so this marker
 * points at a search instead of a line window.
 */
const withinBudget = (shaped: Compressed, totalLines: number, options: CompressOptions): ModelCopy => {
  if (shaped.text.length <= options.maxChars && countLines(shaped.text) <= options.maxLines) {
    return { modelOutput: shaped.text, truncated: shaped.collapsed }
  }
  const id = JSON.stringify(options.callId)
  const cut = adaptiveTruncate(shaped.text, {
    maxChars: options.maxChars,
    maxLines: options.maxLines,
    direction: options.direction,
    marker: (r) =>
      options.stored.stored
        ? `[… ${n(r.toLine - r.fromLine + 1)} more lines of this shortened copy omitted. The full output has ${n(totalLines)} lines: search it with output {"id": ${id}, "pattern": "<regex>"} …]`
        : `[… ${n(r.toLine - r.fromLine + 1)} more lines omitted. The full output was not kept (${options.stored.reason}); re-run with a narrower command …]`
  })
  return { modelOutput: cut.text, truncated: true }
}

const passOptions = (totalLines: number, totalChars: number, options: CompressOptions): PassOptions => ({
  totalLines,
  totalChars,
  maxChars: options.maxChars,
  maxLines: options.maxLines,
  marker: omittedMarker(options.callId, options.stored)
})

/**
 * How an output over the budget is shaped: by its declared kind, except that a file's contents
 * or an unclassified command's output is shaped as a log when the call failed (a non-zero exit,
 * a timeout, a cancel) or when it reads as one (timestamps, levels): a service's log, `cat
 * app.log`. A diff or a search keeps its own shape: `diff`, `git diff --exit-code` and `grep`
 * exit 1 for "differences found" and "no match", and all their lines are what was asked for.
 */
export const shapeKind = (kind: string, failed: boolean, head: () => string, tail: () => string): string =>
  (kind === "other" || kind === "cat") && (failed || looksLikeLog(head(), tail())) ? "log" : kind

/** A call failed: an error outcome, or a tool's `exitCode` metadata (bash's) other than 0, or `stopped`. */
export const failedCall = (isError: boolean, metadata: Readonly<Record<string, unknown>> | undefined): boolean =>
  isError || (typeof metadata?.exitCode === "number" && metadata.exitCode !== 0) || metadata?.stopped === true

/** Cheap to test on a whole text: every strong failure line holds one of these. */
const FAILURE_HINT = /error|fail|exception|traceback|panic|fatal|critical|severe|crit|emerg|alert|err!|[✗✘✖]|\*\*\*/i

/**
 * Whether a command's output (held in memory) has a line saying something failed anywhere:
 * a clean exit says nothing about what a service's output holds, so such an output is shaped
 * as a log and the line survives wherever it is.
 */
const saysFailure = (text: string): boolean => {
  if (!FAILURE_HINT.test(text)) return false
  let found = false
  forEachLine(text, (line) => {
    if (!found && FAILURE_HINT.test(line) && isStrongFailureLine(line)) found = true
  })
  return found
}

/** The first and last LOG_SAMPLE_CHARS characters of a text held in memory, to tell a log by. */
const LOG_SAMPLE_CHARS = 64 * 1024

/** The model's copy of `text` (held in memory) for an output of `kind`; undefined for a kind it does not know. */
export const compressForModel = (declared: string, text: string, options: CompressOptions): ModelCopy | undefined => {
  if (!KINDS.has(declared)) return undefined
  const over = text.length > options.maxChars || countLines(text) > options.maxLines
  const kind = over
    ? shapeKind(
        declared,
        options.failed === true || (declared === "other" && saysFailure(text)),
        () => headOf(text, LOG_SAMPLE_CHARS),
        () => tailOf(text, LOG_SAMPLE_CHARS)
      )
    : declared
  // Diffs, file contents and unknown output: only the colour goes; line numbers stay the stored ones.
  if (kind !== "search" && kind !== "log") {
    const clean = stripAnsi(text)
    const cut = adaptiveTruncate(clean, {
      maxChars: options.maxChars,
      maxLines: options.maxLines,
      direction: options.direction,
      marker: omittedMarker(options.callId, options.stored)
    })
    return { modelOutput: cut.text, truncated: cut.truncated || clean !== text }
  }
  const totalLines = countLines(text)
  const sink = passFor(kind, passOptions(totalLines, text.length, options))
  let stripped = false
  forEachLine(text, (line) => {
    const clean = stripAnsi(line)
    if (clean !== line) stripped = true
    sink.push(clean)
  })
  const copy = withinBudget(sink.finish(), totalLines, options)
  return stripped ? { ...copy, truncated: true } : copy
}

type Spilled = Extract<OutputView, { kind: "spilled" }>

/**
 * The model's copy of an output too large to hold, for an output of `kind`; undefined for a kind
 * it does not know. Logs and search results are read line by line from the store's file
 * (`lines`); diffs, file contents and the rest (or a spilled output with no file to read) are cut
 * from the two ends the writer kept, with only the colour stripped from what is shown.
 */
export const compressSpilled = Effect.fnUntraced(function* (
  declared: string,
  view: Spilled,
  lines: LineSource | undefined,
  options: CompressOptions
): Effect.fn.Return<ModelCopy | undefined> {
  if (!KINDS.has(declared)) return undefined
  // Spilled means over any budget: a failed call's or a log's output keeps its failure lines.
  const kind = shapeKind(
    declared,
    options.failed === true,
    () => view.head,
    () => view.tail
  )
  const ends = (): ModelCopy => {
    const cut = truncateSpilled(view, { ...options, marker: omittedMarker(options.callId, options.stored) })
    return { modelOutput: stripAnsi(cut.text), truncated: true }
  }
  // A command's output that is no log by its ends may still say something failed in its
  // middle: read as a log, and kept as one only if it did.
  const probe = kind === "other" && lines !== undefined
  if ((kind !== "search" && kind !== "log" && !probe) || lines === undefined) return ends()
  const logSink = kind === "search" ? undefined : logPass(passOptions(view.lines, view.chars, options))
  const sink = logSink ?? searchPass(passOptions(view.lines, view.chars, options))
  const read = yield* Effect.result(
    lines((line) => {
      sink.push(`${stripAnsi(line)}\n`)
      return true
    })
  )
  // The file went away under us (evicted, removed): the two ends are still in memory.
  if (read._tag === "Failure") return ends()
  if (probe && logSink?.sawFailure() !== true) return ends()
  return { ...withinBudget(sink.finish(), view.lines, options), truncated: true }
})

/**
 * The lines of an output the store keeps in a file, read from that file (never whole);
 * undefined when it has none, or when part of it was past the spill limit (its line numbers
 * would not match the output's).
 */
export const spilledLines = (
  store: OutputStore["Service"],
  fs: FileSystem.FileSystem,
  sessionId: string,
  id: string
): Effect.Effect<LineSource | undefined> =>
  Effect.map(store.get(sessionId, id), (found) => {
    const entry = Option.getOrUndefined(found)
    return entry?.file === undefined || entry.droppedBytes !== undefined ? undefined : linesInFile(fs, entry.file)
  })
