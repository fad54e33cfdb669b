/**
 * How `read` turns a text file's bytes into its window of numbered lines: decoded only up to
 * the end of the window, past it only counted, every byte fingerprinted on the way (for
 * ReadState). A small file arrives whole; a larger one in chunks, so memory stays bounded by
 * the window whatever the file's size.
 */
import { Effect, Option, type PlatformError } from "effect"
import type { OpenFile } from "../../fs/local-fs.ts"
import { displayPath } from "../../path/path.ts"
import type { Fingerprinter } from "../../read-state/fingerprint.ts"
import { cutEnd } from "../../text/cut.ts"
import { fail, ToolFailure, type TransientFailure } from "../../tool/errors.ts"
import type { ToolOutput } from "../../tool/tool.ts"
import { fsFailure } from "../failures/fs.ts"

export const MAX_LINE_CHARS = 2000
/** How much of a file's start is checked for a NUL byte. */
export const BINARY_SNIFF_BYTES = 8192
const CHUNK_BYTES = 64 * 1024
/** Files under this size are read with one read call; larger ones are streamed. */
export const WHOLE_FILE_BYTES = 1024 * 1024

export type ReadError = ToolFailure | TransientFailure

export const binaryAdvice = (shown: string) =>
  `read shows text only. Inspect it with bash instead, e.g. \`file ${shown}\` or \`xxd ${shown} | head -n 20\`.`

/** Collects the requested window of lines while counting all of them. */
class LineWindow {
  /** Lines ended by a newline so far. */
  private completed = 0
  /** Characters after the last newline (only kept while inside the window). */
  private current = ""
  private currentLength = 0
  readonly lines: Array<string> = []
  cut = 0
  /** True when the file's last line has no newline after it. */
  unterminated = false
  /** Lines of the window whose "\r" before the newline (or the end) is not shown. */
  crlf = 0
  private readonly first: number
  private readonly last: number

  constructor(first: number, count: number) {
    this.first = first
    this.last = first + count - 1
  }

  /** True once every line of the window is complete: the rest only needs counting. */
  get filled(): boolean {
    return this.completed >= this.last
  }

  /** Feeds decoded text; returns the text after the window was filled (to be counted only). */
  feed(text: string): string {
    let start = 0
    while (start <= text.length) {
      const nl = text.indexOf("\n", start)
      const piece = nl < 0 ? text.slice(start) : text.slice(start, nl)
      this.append(piece)
      if (nl < 0) return ""
      this.finishLine()
      start = nl + 1
      if (this.filled) return text.slice(start)
    }
    return ""
  }

  private append(piece: string) {
    const lineNo = this.completed + 1
    if (lineNo >= this.first && lineNo <= this.last && this.current.length < MAX_LINE_CHARS + 1) {
      this.current += piece.slice(0, MAX_LINE_CHARS + 1 - this.current.length)
    }
    this.currentLength += piece.length
  }

  private finishLine() {
    const lineNo = this.completed + 1
    if (lineNo >= this.first && lineNo <= this.last) {
      let text = this.current
      let length = this.currentLength
      if (text.endsWith("\r") && length === text.length) {
        text = text.slice(0, -1)
        length--
        this.crlf++
      }
      if (length > MAX_LINE_CHARS) {
        this.cut++
        const end = cutEnd(text, MAX_LINE_CHARS)
        text = `${text.slice(0, end)}… [${length - end} chars cut]`
      }
      this.lines.push(text)
    }
    this.completed++
    this.current = ""
    this.currentLength = 0
  }

  /** Ends the input: a last line without a newline still counts. */
  end(): void {
    if (this.currentLength > 0) {
      this.unterminated = true
      this.finishLine()
    }
  }

  get total(): number {
    return this.completed
  }

  /** Counts the newlines of text past the window. */
  countText(text: string, trailing: { value: boolean }): void {
    for (let i = text.indexOf("\n"); i >= 0; i = text.indexOf("\n", i + 1)) this.completed++
    if (text.length > 0) trailing.value = !text.endsWith("\n")
  }

  /** Counts a last line that has no newline. */
  addLine(): void {
    this.completed++
  }

  countBytes(bytes: Uint8Array, trailing: { value: boolean }): void {
    for (let i = bytes.indexOf(10); i >= 0; i = bytes.indexOf(10, i + 1)) this.completed++
    if (bytes.length > 0) trailing.value = bytes[bytes.length - 1] !== 10
  }
}

type ChunkReader = (size: number) => Effect.Effect<Option.Option<Uint8Array>, ReadError>

/**
 * Reads an open file as a series of chunks. The size from fstat lets one read of size + 1
 * bytes take a file up to WHOLE_FILE_BYTES whole — a short read proves the end, so no read
 * comes back empty — which makes a small file two file-system round trips (open, read) where
 * a plain readFile takes four (each costs ~100 µs on a busy machine). A file that is larger,
 * or grew since, streams in chunks, so memory stays bounded.
 */
const chunkReader = Effect.fnUntraced(function* (
  file: OpenFile,
  toFailure: <A, R>(effect: Effect.Effect<A, PlatformError.PlatformError, R>) => Effect.Effect<A, ReadError, R>
): Effect.fn.Return<ChunkReader, ReadError> {
  const size = file.stats.size
  let position = 0
  let buffered: Uint8Array = new Uint8Array(0)
  let ended = false
  if (size < WHOLE_FILE_BYTES) {
    const whole = new Uint8Array(size + 1)
    const read = yield* toFailure(file.read(whole, 0))
    position = read
    buffered = whole.subarray(0, read)
    ended = read <= size
  }
  let at = 0
  return (n: number) => {
    if (at < buffered.length) {
      const chunk = buffered.subarray(at, at + n)
      at += chunk.length
      return Effect.succeed(Option.some(chunk))
    }
    if (ended) return Effect.succeed(Option.none())
    const into = new Uint8Array(n)
    return toFailure(file.read(into, position)).pipe(
      Effect.map((read) => {
        position += read
        return read === 0 ? Option.none() : Option.some(into.subarray(0, read))
      })
    )
  }
})

/**
 * A text file's bytes, fed in order: the window's lines, the count of all lines, and the
 * fingerprint of every byte. Past the window, lines are only counted, never decoded.
 */
class TextScan {
  readonly window: LineWindow
  private readonly decoder = new TextDecoder("utf-8")
  private readonly trailing = { value: false }
  private counting = false
  private readonly fingerprint: Fingerprinter

  constructor(offset: number, limit: number, fingerprint: Fingerprinter) {
    this.window = new LineWindow(offset, limit)
    this.fingerprint = fingerprint
  }

  consume(bytes: Uint8Array): void {
    this.fingerprint.update(bytes)
    if (this.counting) {
      this.window.countBytes(bytes, this.trailing)
      return
    }
    const rest = this.window.feed(this.decoder.decode(bytes, { stream: true }))
    if (this.window.filled) {
      this.counting = true
      this.trailing.value = false
      this.window.countText(rest, this.trailing)
    }
  }

  end(): void {
    if (this.counting) {
      if (this.trailing.value) this.window.addLine()
    } else {
      this.window.feed(this.decoder.decode())
      this.window.end()
    }
  }
}

const isBinary = (head: Uint8Array) => head.subarray(0, BINARY_SNIFF_BYTES).includes(0)

const binaryFailure = (shown: string) =>
  fail(`${shown} is a binary file (it contains NUL bytes); ${binaryAdvice(shown)}`)

/** The numbered lines of a finished scan, or why there are none to show. */
const windowOutput = (scan: TextScan, shown: string, abs: string, offset: number): ToolOutput | ToolFailure => {
  const window = scan.window
  const total = window.total
  if (total === 0) {
    return {
      title: `${shown} (empty)`,
      output: `${shown} is empty.`,
      metadata: { path: abs, totalLines: 0, startLine: 0, endLine: 0 }
    }
  }
  if (offset > total) {
    return fail(
      `offset ${offset} is past the end of ${shown}: it has ${total} line${total === 1 ? "" : "s"}. Use an offset from 1 to ${total}.`
    )
  }
  const endLine = offset + window.lines.length - 1
  const width = String(endLine).length
  const body = window.lines.map((text, i) => `${String(offset + i).padStart(width)}\t${text}`)
  if (endLine < total) {
    body.push(`(Showing lines ${offset}-${endLine} of ${total}. Use offset=${endLine + 1} to continue.)`)
  }
  return {
    title: `${shown} (lines ${offset}-${endLine} of ${total})`,
    output: body.join("\n"),
    metadata: {
      path: abs,
      totalLines: total,
      startLine: offset,
      endLine,
      more: endLine < total,
      cutLines: window.cut,
      // Known once the window reaches the last line: what wholeText needs to give the file back exactly.
      ...(endLine === total ? { finalNewline: !window.unterminated, crlfLines: window.crlf } : {})
    }
  }
}

/**
 * The file's text from a read's full output, when that output holds all of it: every line from
 * the first to the last, none cut, nothing decoded to U+FFFD (bytes that are not UTF-8 would not
 * come back as they were). The numbers are dropped, the lines joined with "\n", and the file's
 * final newline kept. Read does not show a line's "\r" before its newline, nor a BOM; write puts
 * them back when every line ends in CRLF (edit/text.ts), so the text is given only when no line
 * or every ended line does, and never when the last line, with no newline, ends in "\r": a file
 * of mixed line ends would come back with them changed. Otherwise undefined, and a window's text
 * never passes for the whole file's.
 */
export const wholeText = (output: string, metadata: Readonly<Record<string, unknown>>): string | undefined => {
  const { totalLines, startLine, endLine, cutLines, finalNewline, crlfLines } = metadata
  if (totalLines === 0 && startLine === 0) return ""
  if (typeof totalLines !== "number" || startLine !== 1 || endLine !== totalLines || cutLines !== 0) return undefined
  if (typeof finalNewline !== "boolean" || output.includes("\uFFFD")) return undefined
  const ended = finalNewline ? totalLines : totalLines - 1
  if (crlfLines !== 0 && crlfLines !== ended) return undefined
  const lines = output.split("\n")
  if (lines.length !== totalLines) return undefined
  const width = String(totalLines).length
  const text: Array<string> = []
  for (let i = 0; i < lines.length; i++) {
    const prefix = `${String(i + 1).padStart(width)}\t`
    if (!lines[i]!.startsWith(prefix)) return undefined
    text.push(lines[i]!.slice(prefix.length))
  }
  return text.join("\n") + (finalNewline ? "\n" : "")
}

/** The window of a file read whole (the local fast path): no effect per chunk. */
export const scanWhole = (
  bytes: Uint8Array,
  shown: string,
  abs: string,
  offset: number,
  limit: number,
  fingerprint: Fingerprinter
): ToolOutput | ToolFailure => {
  if (isBinary(bytes)) return binaryFailure(shown)
  const scan = new TextScan(offset, limit, fingerprint)
  scan.consume(bytes)
  scan.end()
  return windowOutput(scan, shown, abs, offset)
}

/** The window of an open file read in chunks: memory stays bounded whatever its size. */
export const readText = Effect.fnUntraced(function* (
  file: OpenFile,
  root: string,
  abs: string,
  offset: number,
  limit: number,
  fingerprint: Fingerprinter
): Effect.fn.Return<ToolOutput, ReadError> {
  const shown = displayPath(root, abs)
  const toFailure = Effect.mapError((e: PlatformError.PlatformError) => fsFailure(e, root, abs))
  const readChunk = yield* chunkReader(file, toFailure)

  // The first 8 KB decide whether this is text.
  let head = new Uint8Array(0)
  while (head.length < BINARY_SNIFF_BYTES) {
    const chunk = yield* readChunk(BINARY_SNIFF_BYTES - head.length)
    if (Option.isNone(chunk) || chunk.value.length === 0) break
    const joined = new Uint8Array(head.length + chunk.value.length)
    joined.set(head)
    joined.set(chunk.value, head.length)
    head = joined
  }
  if (isBinary(head)) return yield* binaryFailure(shown)

  const scan = new TextScan(offset, limit, fingerprint)
  scan.consume(head)
  while (true) {
    const chunk = yield* readChunk(CHUNK_BYTES)
    if (Option.isNone(chunk) || chunk.value.length === 0) break
    scan.consume(chunk.value)
  }
  scan.end()
  const out = windowOutput(scan, shown, abs, offset)
  return out instanceof ToolFailure ? yield* out : out
})
