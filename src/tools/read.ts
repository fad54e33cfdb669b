/**
 * `read`: a window of numbered lines of a text file, or an image for a model that can see one.
 *
 * Output format: one line per file line, `<number>\t<text>`, the number right-aligned to the
 * width of the last number shown. Lines over 2,000 chars end with `… [N chars cut]`. When lines
 * follow the window, a last line names the window, the total and the `offset` to continue with.
 * The file is read in chunks: memory stays bounded by the window, whatever the file's size.
 *
 * Every byte passes through a fingerprint (size, hash, line hashes) for ReadState: an identical
 * re-read of the same window is answered with a pointer to the earlier copy (spec: "Not sending
 * the same file twice"), and edit/write use the record to notice a file that changed.
 */
import { Effect, FileSystem, Option, type PlatformError, Schema } from "effect"
import { type OpenFile, openForReading, readWholeIfLocal } from "../fs/native.ts"
import { Fingerprinter } from "../read-state/fingerprint.ts"
import { dedupPointer, ReadState } from "../read-state/read-state.ts"
import { cutEnd } from "../text/cut.ts"
import { fail, ToolFailure, type TransientFailure } from "../tool/errors.ts"
import { defineTool, type ToolContext, type ToolOutput } from "../tool/tool.ts"
import { displayPath, extensionOf, fsFailure, notFoundMessage, resolvePath } from "./paths.ts"

export const DEFAULT_READ_LINES = 2000
export const MAX_LINE_CHARS = 2000
export const MAX_IMAGE_BYTES = 10 * 1024 * 1024
/** How much of a file's start is checked for a NUL byte. */
export const BINARY_SNIFF_BYTES = 8192
const CHUNK_BYTES = 64 * 1024
/** Files under this size are read with one read call; larger ones are streamed. */
export const WHOLE_FILE_BYTES = 1024 * 1024

/** Images a model can be shown, by extension. */
export const IMAGE_TYPES: Readonly<Record<string, string>> = {
  png: "image/png",
  jpg: "image/jpeg",
  jpeg: "image/jpeg",
  gif: "image/gif",
  webp: "image/webp"
}

/** Extensions refused as binary without looking inside. */
// biome-ignore format: a word list
export const BINARY_EXTENSIONS: ReadonlySet<string> = new Set([
  // archives and compressed data
  "zip", "tar", "gz", "tgz", "bz2", "xz", "zst", "7z", "rar", "jar", "war", "ear", "apk", "ipa", "deb", "rpm", "dmg", "iso",
  // compiled code and libraries
  "exe", "dll", "so", "dylib", "o", "a", "lib", "obj", "class", "pyc", "pyo", "wasm", "node",
  // documents
  "pdf", "doc", "docx", "xls", "xlsx", "ppt", "pptx", "odt", "ods", "odp",
  // images a model cannot be shown here, audio, video, fonts
  "bmp", "ico", "icns", "tif", "tiff", "heic", "heif", "avif", "psd",
  "mp3", "wav", "flac", "ogg", "m4a", "aac", "mp4", "m4v", "mov", "avi", "mkv", "webm",
  "ttf", "otf", "woff", "woff2", "eot",
  // databases and other binary data
  "sqlite", "sqlite3", "db", "bin", "pak", "pkl", "npy", "npz", "parquet"
])

const Parameters = Schema.Struct({
  filePath: Schema.String.annotate({ description: "File to read, absolute or relative to the project root." }),
  offset: Schema.optionalKey(
    Schema.Int.check(Schema.isGreaterThan(0)).annotate({ description: "First line to show, 1-based (default 1)." })
  ),
  limit: Schema.optionalKey(
    Schema.Int.check(Schema.isGreaterThan(0)).annotate({
      description: `How many lines to show (default ${DEFAULT_READ_LINES}).`
    })
  )
})

export const formatSize = (bytes: number): string =>
  bytes < 1024
    ? `${bytes} B`
    : bytes < 1024 * 1024
      ? `${(bytes / 1024).toFixed(1)} KB`
      : `${(bytes / (1024 * 1024)).toFixed(1)} MB`

/** The image type from the file's first bytes, when they are a known signature. */
const sniffImage = (bytes: Uint8Array): string | undefined => {
  const starts = (...sig: Array<number>) => sig.every((b, i) => bytes[i] === b)
  if (starts(0x89, 0x50, 0x4e, 0x47)) return "image/png"
  if (starts(0xff, 0xd8, 0xff)) return "image/jpeg"
  if (starts(0x47, 0x49, 0x46, 0x38)) return "image/gif"
  if (starts(0x52, 0x49, 0x46, 0x46) && bytes[8] === 0x57 && bytes[9] === 0x45 && bytes[10] === 0x42) {
    return "image/webp"
  }
  return undefined
}

const binaryAdvice = (shown: string) =>
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
    if (this.currentLength > 0) this.finishLine()
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

type ReadError = ToolFailure | TransientFailure

/** A failed open as the model reads it: the did-you-mean message when the file does not exist. */
const openFailure =
  (root: string, abs: string) =>
  <A, R>(
    effect: Effect.Effect<A, PlatformError.PlatformError, R>
  ): Effect.Effect<A, ReadError, R | FileSystem.FileSystem> =>
    Effect.catchTag(effect, "PlatformError", (e) =>
      e.reason._tag === "NotFound"
        ? Effect.flatMap(FileSystem.FileSystem, (fs) =>
            Effect.flatMap(notFoundMessage(fs, root, abs), (message) => Effect.fail(fail(message)))
          )
        : Effect.fail(fsFailure(e, root, abs))
    )

/** Why a file of this type is not read, or undefined when it is a regular file. */
const typeRefusal = (type: string, shown: string): ToolFailure | undefined =>
  type === "Directory"
    ? fail(`${shown} is a directory; use ls or glob to see what it contains.`)
    : type !== "File"
      ? fail(`${shown} is not a regular file (${type}); read only reads files.`)
      : undefined

const binaryExtensionFailure = (shown: string, ext: string) =>
  fail(`${shown} is a binary file (.${ext}); ${binaryAdvice(shown)}`)

const readImage = (file: OpenFile, root: string, abs: string, ext: string): Effect.Effect<ToolOutput, ReadError> =>
  Effect.gen(function* () {
    const shown = displayPath(root, abs)
    const size = file.stats.size
    if (size > MAX_IMAGE_BYTES) {
      return yield* fail(
        `${shown} is an image of ${formatSize(size)}; images over ${formatSize(MAX_IMAGE_BYTES)} are not read. Make a smaller copy first (e.g. with bash and ImageMagick) and read that.`
      )
    }
    const buffer = new Uint8Array(size)
    let filled = 0
    while (filled < size) {
      const n = yield* file.read(buffer.subarray(filled), filled).pipe(Effect.mapError((e) => fsFailure(e, root, abs)))
      if (n === 0) break
      filled += n
    }
    const bytes = buffer.subarray(0, filled)
    const mimeType = sniffImage(bytes) ?? (IMAGE_TYPES[ext] as string)
    const kind = mimeType.slice("image/".length)
    return {
      title: `${shown} (image)`,
      output: `Image: ${shown} (${kind}, ${formatSize(bytes.length)})`,
      metadata: {
        path: abs,
        image: { mimeType, data: Buffer.from(bytes).toString("base64"), bytes: bytes.length }
      }
    }
  })

type ChunkReader = (size: number) => Effect.Effect<Option.Option<Uint8Array>, ReadError>

/**
 * Reads an open file as a series of chunks. The size from fstat lets one read of size + 1
 * bytes take a file up to WHOLE_FILE_BYTES whole — a short read proves the end, so no read
 * comes back empty — which makes a small file two file-system round trips (open, read) where
 * a plain readFile takes four (each costs ~100 µs on a busy machine). A file that is larger,
 * or grew since, streams in chunks, so memory stays bounded.
 */
const chunkReader = (
  file: OpenFile,
  toFailure: <A, R>(effect: Effect.Effect<A, PlatformError.PlatformError, R>) => Effect.Effect<A, ReadError, R>
): Effect.Effect<ChunkReader, ReadError> =>
  Effect.gen(function* () {
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
      cutLines: window.cut
    }
  }
}

/** The window of a file read whole (the local fast path): no effect per chunk. */
const scanWhole = (
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
const readText = (
  file: OpenFile,
  root: string,
  abs: string,
  offset: number,
  limit: number,
  fingerprint: Fingerprinter
): Effect.Effect<ToolOutput, ReadError> =>
  Effect.gen(function* () {
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

/**
 * The streaming path: the file opened (an image read whole, text in chunks) and closed when
 * done. Taken off a local disk, for an image, and for a file too large to read in one call.
 */
const readOpened = (
  root: string,
  abs: string,
  ext: string,
  isImage: boolean,
  window: { readonly offset: number; readonly limit: number },
  fingerprint: Fingerprinter
): Effect.Effect<{ readonly output: ToolOutput; readonly mtimeMs: number }, ReadError, FileSystem.FileSystem> =>
  Effect.gen(function* () {
    const shown = displayPath(root, abs)
    const file = yield* openFailure(root, abs)(openForReading(abs))
    const refused = typeRefusal(file.type, shown)
    if (refused !== undefined) return yield* refused
    const mtimeMs = file.stats.mtimeMs
    if (isImage) return { output: yield* readImage(file, root, abs, ext), mtimeMs }
    if (BINARY_EXTENSIONS.has(ext)) return yield* binaryExtensionFailure(shown, ext)
    return { output: yield* readText(file, root, abs, window.offset, window.limit, fingerprint), mtimeMs }
  }).pipe(Effect.scoped)

export const ReadTool = defineTool({
  id: "read",
  description:
    "Read a text file as numbered lines: `<line number>\\t<text>`, 2,000 lines from `offset` by default, lines over 2,000 chars cut; a last line gives the offset to continue. Shows png/jpeg/gif/webp images when you can see images. Refuses directories (use ls or glob) and binary files.",
  parameters: Parameters,
  concurrencySafe: true,
  mutates: false,
  retrySafe: true,
  interruptBehavior: "cancel",
  truncate: "head",
  permissions: { operations: ["file.read"] },
  paths: ({ filePath }, ctx) => [resolvePath(ctx.root, filePath)],
  // (Effects chained, not a generator: every read passes through here.)
  execute: ({ filePath, offset, limit }, ctx) => {
    const abs = resolvePath(ctx.root, filePath)
    const shown = displayPath(ctx.root, abs)
    const ext = extensionOf(abs)
    const isImage = IMAGE_TYPES[ext] !== undefined
    // Decided from the name alone, before the file is touched: a model that cannot see
    // images must not pay for reading one (spec gap 9).
    if (isImage && !ctx.canSeeImages) {
      return Effect.fail(
        fail(
          `${shown} is an image (${ext}) and this model cannot see images, so it was not read. Get what you need another way, e.g. bash with \`file ${shown}\` for its type and size.`
        )
      )
    }
    const window = { offset: offset ?? 1, limit: limit ?? DEFAULT_READ_LINES }
    // Suspended: the fingerprint is this run's own, however often the effect is run.
    return Effect.suspend(() => readAndRecord(ctx, abs, shown, ext, isImage, window))
  }
})

/** The read itself, then the record the stale-file check and de-duplication use. */
const readAndRecord = (
  ctx: ToolContext,
  abs: string,
  shown: string,
  ext: string,
  isImage: boolean,
  window: { readonly offset: number; readonly limit: number }
) => {
  const fingerprint = new Fingerprinter()
  const streamed = () => readOpened(ctx.root, abs, ext, isImage, window, fingerprint)
  // A small file on a local disk is read whole in one synchronous step; anything else
  // (an image, a large file, a network mount) is opened and streamed.
  // (A known binary extension is only opened and typed: it is refused unread.)
  const whole = isImage ? undefined : readWholeIfLocal(abs, BINARY_EXTENSIONS.has(ext) ? 0 : WHOLE_FILE_BYTES)
  const read =
    whole === undefined
      ? streamed()
      : Effect.flatMap(openFailure(ctx.root, abs)(whole), (file) => {
          const refused =
            typeRefusal(file.type, shown) ??
            (BINARY_EXTENSIONS.has(ext) ? binaryExtensionFailure(shown, ext) : undefined)
          if (refused !== undefined) return Effect.fail(refused)
          if (file.bytes === undefined) return streamed()
          const output = scanWhole(file.bytes, shown, abs, window.offset, window.limit, fingerprint)
          return Effect.succeed({ output, mtimeMs: file.stats.mtimeMs })
        })
  return Effect.flatMap(read, ({ output, mtimeMs }) => {
    if (output instanceof ToolFailure) return Effect.fail(output)
    // An image is shown, not recorded: dedup and the stale-file check are about text.
    if (isImage) return Effect.succeed(output)
    const view = { fingerprint: fingerprint.digest(), mtimeMs }
    return Effect.flatMap(ReadState, (readState) =>
      Effect.flatMap(readState.findDuplicate(ctx.sessionId, abs, window, view), (earlier) =>
        earlier !== undefined
          ? Effect.succeed({
              title: `${shown} (unchanged since an earlier read)`,
              output: dedupPointer(earlier),
              metadata: { ...output.metadata, unchanged: true, sameAs: earlier }
            })
          : Effect.as(readState.recordRead(ctx.sessionId, ctx.callId, abs, window, view), output)
      )
    )
  })
}
