/**
 * An output a child process writes straight into a file (bash). Reading hundreds of MB from a
 * pipe costs a Node process several times what the command itself takes; a file costs the
 * command one copy and us one scan. The writer follows the file while the command runs:
 * it counts bytes, characters and lines, and hands the newest part to the UI. At commit an
 * output that fits the memory budget is read back and stored as text (the file goes); a larger
 * one stays where it is as the store's spilled file, with its head and tail read from its ends.
 * It uses node:fs/promises directly because a store without a directory of its own (the
 * memory-only one) has no FileSystem service, yet bash still needs a file to capture into.
 */
import { isAscii } from "node:buffer"
import { type FileHandle, open, rm } from "node:fs/promises"
import { Effect, Semaphore } from "effect"
import { headOf, tailOf } from "../text/cut.ts"
import { fail, type ToolFailure } from "../tool/errors.ts"
import { readableError } from "../tool/readable-error.ts"
import type { Capture } from "../tool/tool.ts"
import type { OutputView, OutputWriter } from "./spill.ts"
import type { PutRequest, PutResult, StoredOutput } from "./stored-output.ts"

/** An OutputWriter whose output a child writes into `path` (ToolContext.capture). */
export interface CaptureWriter extends OutputWriter, Capture {}

/** How much is read per round trip while following. */
const CHUNK = 1024 * 1024
/**
 * One look reads at most this much: a command writing faster than we read must not keep a look
 * going (and the size limit unchecked) for as long as it runs.
 */
const LOOK_BYTES = 64 * CHUNK
/** Of what arrived since the last look, the UI is shown at most this much, the newest. */
const SHOW_BYTES = 64 * 1024

/** Newlines in `bytes[0, n)`, four bytes at a time (`yes` output is half newlines). */
export const countNewlines = (bytes: Uint8Array, n: number): number => {
  let count = 0
  let i = 0
  if (bytes.byteOffset % 4 === 0) {
    const words = n >>> 2
    const u32 = new Uint32Array(bytes.buffer, bytes.byteOffset, words)
    for (; i < words; i++) {
      // Each byte of x that is 0 (was "\n") gets its high bit set in t; no false positives.
      const x = u32[i]! ^ 0x0a0a0a0a
      const t = ~(((x & 0x7f7f7f7f) + 0x7f7f7f7f) | x | 0x7f7f7f7f)
      if (t !== 0) count += Math.imul((t >>> 7) & 0x01010101, 0x01010101) >>> 24
    }
    i = words << 2
  }
  for (; i < n; i++) if (bytes[i] === 10) count++
  return count
}

/** Skips UTF-8 continuation bytes at the start, so decoding starts on a character. */
const fromCharStart = (bytes: Uint8Array): Uint8Array => {
  let i = 0
  while (i < bytes.length && i < 3 && (bytes[i]! & 0xc0) === 0x80) i++
  return bytes.subarray(i)
}

export const makeCaptureWriter = Effect.fnUntraced(function* (options: {
  readonly request: Omit<PutRequest, "text">
  /** The file to create (in the store's directory, or a private temporary one). */
  readonly path: string
  /** At or below this many bytes the output is read back and kept in memory. */
  readonly memoryBytes: number
  /** Past this many bytes the output is over its limit (and a commit keeps only this many). */
  readonly maxBytes: number
  readonly keepChars: number
  /** Whether a large output may stay on disk as the store's file; if not, only its ends are kept. */
  readonly keepFile: boolean
  readonly file: (entry: StoredOutput) => Effect.Effect<void>
  readonly tooLarge: string
  /** The newest part of what arrived, and its character offset in the output. */
  readonly show: (text: string, offset: number) => Effect.Effect<void>
}): Effect.fn.Return<CaptureWriter, ToolFailure> {
  const { request, path, memoryBytes, maxBytes, keepChars } = options
  // The one failure a command's caller can act on (a full disk, too many open files).
  const handle: FileHandle = yield* Effect.tryPromise({
    try: () => open(path, "w+"),
    catch: (e) =>
      fail(
        `Could not create a file for the command's output (${readableError(e)}). Check the disk has free space, then run it again.`
      )
  })
  let bytes = 0
  let chars = 0
  let newlines = 0
  let last = -1
  let done = false
  let kept: string | undefined // the whole text, once settled in memory
  const decoder = new TextDecoder("utf-8")
  const buffer = new Uint8Array(CHUNK)

  const close = Effect.promise(() => handle.close().catch(() => undefined))
  const remove = Effect.promise(() => rm(path, { force: true }).catch(() => undefined))

  /** Counts `n` new bytes of `data`: bytes, characters, lines and the last byte. */
  const account = (data: Uint8Array, n: number): void => {
    newlines += countNewlines(data, n)
    const piece = data.subarray(0, n)
    chars += isAscii(piece) ? n : decoder.decode(piece, { stream: true }).length
    last = data[n - 1]!
    bytes += n
  }

  /**
   * Shows the newest part of what arrived since byte `from`. `held` is that data when the
   * caller still has all of it in memory (one read, or a write): then nothing is read back.
   */
  const showNewest = (from: number, held?: Uint8Array) =>
    Effect.suspend(() => {
      const start = Math.max(from, bytes - SHOW_BYTES)
      if (start >= bytes) return Effect.void
      const piece =
        held !== undefined
          ? Effect.succeed(held.subarray(start - from))
          : Effect.promise(async () => {
              const into = new Uint8Array(bytes - start)
              const { bytesRead } = await handle.read(into, 0, into.length, start)
              return into.subarray(0, bytesRead)
            })
      return piece.pipe(
        Effect.map((p) => new TextDecoder("utf-8").decode(fromCharStart(p), { stream: true })),
        Effect.flatMap((text) => (text === "" ? Effect.void : options.show(text, chars - text.length)))
      )
    })

  /** Reads what arrived, up to LOOK_BYTES; true when it reached the end of the file. */
  const look: Effect.Effect<boolean> = Effect.gen(function* () {
    if (done) return true
    const from = bytes
    let atEnd = false
    let reads = 0
    while (bytes - from < LOOK_BYTES) {
      const { bytesRead } = yield* Effect.promise(() => handle.read(buffer, 0, CHUNK, bytes))
      reads++
      if (bytesRead > 0) account(buffer, bytesRead)
      if (bytesRead < CHUNK) {
        atEnd = true
        break
      }
    }
    // After a single read the buffer still holds everything that arrived.
    yield* showNewest(from, reads === 1 ? buffer.subarray(0, bytes - from) : undefined)
    return atEnd
  })
  const follow = Effect.asVoid(look)
  /** Reads to the end of the file (the command has stopped writing). */
  const toEnd: Effect.Effect<void> = Effect.gen(function* () {
    while (!(yield* look)) {}
  })

  const write = (chunk: string): Effect.Effect<void> =>
    Effect.gen(function* () {
      if (chunk.length === 0 || done) return
      yield* toEnd
      const data = Buffer.from(chunk, "utf8")
      const from = bytes
      yield* Effect.promise(() => handle.write(data, 0, data.length, bytes))
      account(data, data.length)
      yield* showNewest(from, data)
    })

  /** The first and last `keepChars` characters, read from the file's two ends. */
  const ends = Effect.promise(async () => {
    const span = Math.min(bytes, keepChars * 4)
    const headBytes = new Uint8Array(span)
    await handle.read(headBytes, 0, span, 0)
    const head = headOf(new TextDecoder("utf-8").decode(headBytes, { stream: true }), keepChars)
    const tailBytes = new Uint8Array(span)
    await handle.read(tailBytes, 0, span, bytes - span)
    const tailText = new TextDecoder("utf-8").decode(fromCharStart(tailBytes))
    return { head, tail: tailOf(tailText, keepChars) }
  })

  const lines = () => newlines + (bytes > 0 && last !== 10 ? 1 : 0)

  /** Reads to the end; an output that fits memory comes into memory and its file goes. */
  const settle: Effect.Effect<void> = Effect.gen(function* () {
    if (done || kept !== undefined) return
    yield* toEnd
    if (bytes > memoryBytes) return
    const whole = new Uint8Array(bytes)
    yield* Effect.promise(() => handle.read(whole, 0, bytes, 0))
    kept = new TextDecoder("utf-8").decode(whole)
  })

  const commit = Effect.gen(function* () {
    yield* settle
    done = true
    if (kept !== undefined) {
      const text = kept
      kept = undefined
      yield* close
      yield* remove
      yield* options.file({ ...request, text, chars: text.length, lines: lines(), bytes })
      return { result: { stored: true } as PutResult, view: { kind: "text", text } as OutputView }
    }
    const { head, tail } = yield* ends
    const view: OutputView = { kind: "spilled", head, tail, chars, lines: lines(), bytes }
    const dropped = Math.max(0, bytes - maxBytes)
    if (dropped > 0) yield* Effect.promise(() => handle.truncate(maxBytes).catch(() => undefined))
    yield* close
    if (!options.keepFile) {
      yield* remove
      return { result: { stored: false, reason: options.tooLarge } as PutResult, view }
    }
    yield* options.file({
      ...request,
      text: "",
      chars,
      lines: view.lines,
      bytes,
      file: path,
      head,
      tail,
      ...(dropped > 0 ? { droppedBytes: dropped } : {})
    })
    return { result: { stored: true } as PutResult, view }
  })

  const discard = Effect.suspend(() => {
    if (done) return Effect.void
    done = true
    kept = undefined
    return Effect.andThen(close, remove)
  })

  // One operation at a time: a follow must not interleave with a write or the commit.
  const lock = Semaphore.makeUnsafe(1).withPermits(1)
  return {
    path,
    follow: lock(follow),
    toEnd: lock(toEnd),
    limitBytes: maxBytes,
    // fstat, not the bytes followed so far: a command writing GB/s outruns any reader.
    overLimit: Effect.promise(() =>
      handle.stat().then(
        (s) => s.size > maxBytes,
        () => bytes > maxBytes
      )
    ),
    endsWithNewline: () => (kept !== undefined ? kept.endsWith("\n") : last === 10),
    write: (chunk) => lock(write(chunk)),
    chars: () => (kept !== undefined ? kept.length : chars),
    text: () => kept ?? (bytes === 0 ? "" : undefined),
    inMemory: () => kept !== undefined || bytes === 0,
    settle: lock(settle),
    commit: lock(commit),
    discard: lock(discard)
  }
})
