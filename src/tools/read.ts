/**
 * `read`: a window of numbered lines of a text file, or an image for a model that can see one.
 *
 * Output format: one line per file line, `<number>\t<text>`, the number right-aligned to the
 * width of the last number shown. Lines over 2,000 chars end with `… [N chars cut]`. When lines
 * follow the window, a last line names the window, the total and the `offset` to continue with.
 * The file is read in chunks: memory stays bounded by the window, whatever the file's size
 * (read/text.ts). All I/O goes through LocalFs, so any file system the system is given serves it.
 *
 * Every byte passes through a fingerprint (size, hash, line hashes) for ReadState: an identical
 * re-read of the same window is answered with a pointer to the earlier copy (spec: "Not sending
 * the same file twice"), and edit/write use the record to notice a file that changed.
 */
import { Effect, FileSystem, type PlatformError, Schema } from "effect"
import { type FileStats, LocalFs, type OpenFile } from "../fs/local-fs.ts"
import { displayPath, extensionOf, resolvePath } from "../path/path.ts"
import { openedSecretTwin } from "../permission/containment.ts"
import { Fingerprinter } from "../read-state/fingerprint.ts"
import { dedupPointer, ReadState } from "../read-state/read-state.ts"
import { fail, ToolFailure } from "../tool/errors.ts"
import { defineTool, type ToolContext, type ToolOutput } from "../tool/tool.ts"
import { fsFailure, notFoundMessage } from "./failures/fs.ts"
import { binaryAdvice, type ReadError, readText, scanWhole, WHOLE_FILE_BYTES, wholeText } from "./read/text.ts"

export { BINARY_SNIFF_BYTES, MAX_LINE_CHARS, WHOLE_FILE_BYTES } from "./read/text.ts"

export const DEFAULT_READ_LINES = 2000
export const MAX_IMAGE_BYTES = 10 * 1024 * 1024

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

const readImage = Effect.fnUntraced(function* (
  file: OpenFile,
  root: string,
  abs: string,
  ext: string
): Effect.fn.Return<ToolOutput, ReadError> {
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

/** The file opened is not the one the permission check resolved the path to: it changed in between. */
const movedFailure = (shown: string, checked: string, opened: string) =>
  fail(
    `${shown} changed while it was being opened: the permission check saw ${checked}, and ${opened} was opened instead (a link put in its place?). Nothing was read. Read it again; if it now leads somewhere else, that is checked afresh.`
  )

/** The file opened is another name (a hard link) of a secret: refused, pointing at the secret's own name. */
const twinRefusal = (stats: FileStats, shown: string, root: string) => {
  const twin =
    stats.identity !== undefined && (stats.identity.links > 1 || stats.identity.mounted === true)
      ? openedSecretTwin(stats.identity, [root])
      : undefined
  return twin === undefined
    ? undefined
    : fail(
        `${shown} is another name (a hard link or a bind mount) of ${twin}, which may hold secrets, so it was not read. Read ${twin} by that name instead; that asks the person first.`
      )
}

/**
 * The streaming path: the file opened (an image read whole, text in chunks) and closed when
 * done. Taken off a local disk, for an image, and for a file too large to read in one call.
 */
const readOpened = (
  root: string,
  abs: string,
  expected: string | undefined,
  ext: string,
  isImage: boolean,
  window: { readonly offset: number; readonly limit: number },
  fingerprint: Fingerprinter
): Effect.Effect<
  { readonly output: ToolOutput; readonly mtimeMs: number },
  ReadError,
  FileSystem.FileSystem | LocalFs
> =>
  Effect.gen(function* () {
    const shown = displayPath(root, abs)
    const localFs = yield* LocalFs
    const file = yield* openFailure(root, abs)(localFs.openForReading(abs, expected))
    if (file.moved !== undefined) return yield* movedFailure(shown, expected!, file.moved)
    const refused = twinRefusal(file.stats, shown, root) ?? typeRefusal(file.stats.type, shown)
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
  // A program gets the file's text to change and write back, only when the read holds all of it.
  programValue: (output, metadata) => {
    const text = wholeText(output, metadata)
    return text === undefined ? {} : { text }
  },
  // Hand-chained: every read passes through here (docs/architecture.md).
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
) =>
  Effect.flatMap(LocalFs, (localFs) => {
    const fingerprint = new Fingerprinter()
    // What the permission rules checked this path as: the file opened must be that one.
    const expected = ctx.checked?.find((p) => p.abs === abs)?.real
    const streamed = () => readOpened(ctx.root, abs, expected, ext, isImage, window, fingerprint)
    // A small file on a local disk is read whole in one synchronous step; anything else
    // (an image, a large file, a network mount) is opened and streamed.
    // (A known binary extension is only opened and typed: it is refused unread.)
    const whole = isImage
      ? undefined
      : localFs.readWhole(abs, BINARY_EXTENSIONS.has(ext) ? 0 : WHOLE_FILE_BYTES, expected)
    const read =
      whole === undefined
        ? streamed()
        : Effect.flatMap(openFailure(ctx.root, abs)(whole), (file) => {
            const refused =
              (file.moved === undefined ? undefined : movedFailure(shown, expected!, file.moved)) ??
              twinRefusal(file.stats, shown, ctx.root) ??
              typeRefusal(file.stats.type, shown) ??
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
      // A program's read (code mode) hands the text to the program, never to the model's context:
      // it is never answered with a pointer, and never becomes one for a later read.
      if (ctx.caller?.parentCallId !== undefined) {
        return Effect.flatMap(ReadState, (readState) =>
          readState
            .recordRead(ctx.sessionId, ctx.callId, abs, window, view)
            .pipe(Effect.andThen(readState.markReadPruned(ctx.sessionId, ctx.callId)), Effect.as(output))
        )
      }
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
  })
