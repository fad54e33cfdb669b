/**
 * An output that arrives in pieces (a running command) and may be far larger than memory
 * should hold. The writer keeps it in memory while it fits the session's budget; past that it
 * moves to a file the store owns (or, in a store without files, is dropped), and only its
 * head and tail stay in memory — enough to shape the model's and the UI's copies without
 * ever reading the file back whole.
 */
import { randomBytes } from "node:crypto"
import { Effect, Exit, type FileSystem, type PlatformError, Scope, Semaphore, Stream } from "effect"
import { headOf, sliceWhole, tailOf } from "../text/cut.ts"
import type { PutRequest, PutResult, StoredOutput } from "./stored-output.ts"

/** Where a store puts outputs too large for memory. */
export interface Spill {
  readonly fs: FileSystem.FileSystem
  /** A directory the store owns. */
  readonly dir: string
  /** Bytes on disk across all spilled outputs; one output is cut at this size. */
  readonly maxBytes: number
}

/** What shaping reads: the whole text, or (for an output too large to hold) its two ends. */
export type OutputView =
  | { readonly kind: "text"; readonly text: string }
  | {
      readonly kind: "spilled"
      readonly head: string
      readonly tail: string
      readonly chars: number
      readonly lines: number
      readonly bytes: number
    }

export interface OutputWriter {
  /** Appends a piece of the output. */
  readonly write: (chunk: string) => Effect.Effect<void>
  /** Characters written so far. */
  readonly chars: () => number
  /** Everything written, while it is still held in memory; undefined once it outgrew memory. */
  readonly text: () => string | undefined
  /** False once the output outgrew memory (it spilled, or was dropped but for its ends). */
  readonly inMemory: () => boolean
  /** Brings the writer up to date before its text is read (a capture reads its file to the end). */
  readonly settle: Effect.Effect<void>
  /** Files the output under its id (a file entry when it spilled). The writer is spent after. */
  readonly commit: Effect.Effect<{ readonly result: PutResult; readonly view: OutputView }>
  /** Drops what was written, and its file. Safe to call after commit (then it does nothing). */
  readonly discard: Effect.Effect<void>
}

/**
 * A new file name in `dir` for output `id`: random bits, not a module counter, so two stores in a
 * process (or two processes on one folder) keep nothing in common to agree on.
 */
export const spillPath = (dir: string, id: string): string =>
  `${dir}/${randomBytes(6).toString("hex")}-${id.replace(/[^\w.-]/g, "_")}.out`
/** File writes are batched to this size: one thread-pool round trip per MiB, not per pipe read. */
const FILE_BATCH = 1024 * 1024
const MAX_LINE = 1024 * 1024

export const makeWriter = (options: {
  readonly request: Omit<PutRequest, "text">
  readonly memoryBytes: number
  readonly keepChars: number
  readonly spill: Spill | undefined
  readonly file: (entry: StoredOutput) => Effect.Effect<void>
  readonly tooLarge: string
}): Effect.Effect<OutputWriter> =>
  Effect.sync(() => {
    const { request, memoryBytes, keepChars, spill } = options
    let chunks: Array<string> = []
    let mode: "memory" | "file" | "dropped" = "memory"
    let chars = 0
    let bytes = 0
    let newlines = 0
    let last = ""
    let head = ""
    const tailChunks: Array<string> = []
    let tailChars = 0
    let fileBytes = 0
    let droppedBytes = 0
    let batch: Array<Buffer> = []
    let batchBytes = 0
    let done = false
    let handle: { readonly scope: Scope.Closeable; readonly file: FileSystem.File; readonly path: string } | undefined

    const keep = (chunk: string) => {
      if (head.length < keepChars) head += headOf(chunk, keepChars - head.length)
      tailChunks.push(chunk)
      tailChars += chunk.length
      // Drop whole pieces from the front while the rest still covers keepChars: no copying.
      while (tailChunks.length > 1 && tailChars - tailChunks[0]!.length >= keepChars) {
        tailChars -= tailChunks.shift()!.length
      }
    }
    const tail = () => {
      const joined = tailChunks.join("")
      return tailOf(joined, keepChars)
    }

    const flush: Effect.Effect<void> = Effect.suspend(() => {
      if (handle === undefined || batch.length === 0) return Effect.void
      const data = batch.length === 1 ? batch[0]! : Buffer.concat(batch, batchBytes)
      batch = []
      batchBytes = 0
      return handle.file.writeAll(data).pipe(
        // A full disk must not fail the call: what could not be written counts as dropped.
        Effect.catch(() =>
          Effect.sync(() => {
            droppedBytes += data.length
            fileBytes -= data.length
          })
        )
      )
    })

    const toFile = (data: string): Effect.Effect<void> =>
      Effect.suspend(() => {
        if (handle === undefined) return Effect.void
        const buffer = Buffer.from(data, "utf8")
        if (fileBytes + buffer.length > spill!.maxBytes) {
          droppedBytes += buffer.length
          return Effect.void
        }
        fileBytes += buffer.length
        batch.push(buffer)
        batchBytes += buffer.length
        return batchBytes >= FILE_BATCH ? flush : Effect.void
      })

    const overflow = Effect.gen(function* () {
      const held = chunks
      chunks = []
      if (spill === undefined) {
        mode = "dropped"
        return
      }
      const path = spillPath(spill.dir, request.id)
      const scope = yield* Scope.make()
      const opened = yield* Effect.exit(Scope.provide(spill.fs.open(path, { flag: "w" }), scope))
      if (Exit.isFailure(opened)) {
        yield* Scope.close(scope, Exit.void)
        mode = "dropped"
        return
      }
      handle = { scope, file: opened.value, path }
      mode = "file"
      for (const chunk of held) yield* toFile(chunk)
    })

    const closeFile = Effect.suspend(() =>
      handle === undefined ? Effect.void : flush.pipe(Effect.andThen(Scope.close(handle.scope, Exit.void)))
    )

    const spilledView = (): OutputView => ({
      kind: "spilled",
      head,
      tail: tail(),
      chars,
      lines: newlines + (chars > 0 && last !== "\n" ? 1 : 0),
      bytes
    })

    const writer: OutputWriter = {
      write: (chunk) =>
        Effect.suspend(() => {
          if (chunk.length === 0 || done) return Effect.void
          chars += chunk.length
          bytes += Buffer.byteLength(chunk, "utf8")
          // A plain scan: dense newlines (`yes`) would cost one indexOf call per line.
          for (let i = 0; i < chunk.length; i++) if (chunk.charCodeAt(i) === 10) newlines++
          last = chunk[chunk.length - 1]!
          keep(chunk)
          if (mode === "memory") {
            chunks.push(chunk)
            return bytes > memoryBytes ? overflow : Effect.void
          }
          return mode === "file" ? toFile(chunk) : Effect.void
        }),
      chars: () => chars,
      text: () => (mode === "memory" ? chunks.join("") : undefined),
      inMemory: () => mode === "memory",
      settle: Effect.void,
      commit: Effect.suspend(() => {
        done = true
        if (mode === "memory") {
          const text = chunks.join("")
          chunks = []
          return options
            .file({ ...request, text, chars: text.length, lines: countOf(), bytes })
            .pipe(Effect.as({ result: { stored: true } as PutResult, view: { kind: "text", text } as OutputView }))
        }
        const view = spilledView()
        if (mode === "dropped" || handle === undefined) {
          return Effect.succeed({ result: { stored: false, reason: options.tooLarge } as PutResult, view })
        }
        const { path } = handle
        return closeFile.pipe(
          Effect.andThen(
            options.file({
              ...request,
              text: "",
              chars,
              lines: view.kind === "spilled" ? view.lines : 0,
              bytes,
              file: path,
              head: view.kind === "spilled" ? view.head : "",
              tail: view.kind === "spilled" ? view.tail : "",
              ...(droppedBytes > 0 ? { droppedBytes } : {})
            })
          ),
          Effect.as({ result: { stored: true } as PutResult, view })
        )
      }),
      discard: Effect.suspend(() => {
        if (done) return Effect.void
        done = true
        chunks = []
        const path = handle?.path
        return closeFile.pipe(
          Effect.andThen(
            spill === undefined || path === undefined
              ? Effect.void
              : Effect.ignore(spill.fs.remove(path, { force: true }))
          )
        )
      })
    }
    const countOf = () => newlines + (chars > 0 && last !== "\n" ? 1 : 0)
    // One operation at a time: a write that moves the output to a file must not interleave with another.
    const lock = Semaphore.makeUnsafe(1).withPermits(1)
    return {
      ...writer,
      write: (chunk) => lock(writer.write(chunk)),
      commit: lock(writer.commit),
      discard: lock(writer.discard)
    }
  })

/**
 * Visits the lines of a spilled output in order (without their terminators), reading the file
 * in chunks; `f` returns false to stop early. Lines split on "\n" only, as the store counts them.
 */
export const forEachSpilledLine = (
  fs: FileSystem.FileSystem,
  path: string,
  f: (line: string, index: number) => boolean
): Effect.Effect<void, PlatformError.PlatformError> =>
  Effect.suspend(() => {
    let pending = ""
    let index = 0
    let stopped = false
    const emit = (line: string) => {
      if (stopped) return
      if (!f(line.endsWith("\r") ? line.slice(0, -1) : line, index++)) stopped = true
    }
    return fs.stream(path, { chunkSize: 256 * 1024 }).pipe(
      Stream.decodeText(),
      Stream.runForEachWhile((chunk) =>
        Effect.sync(() => {
          let start = 0
          for (let nl = chunk.indexOf("\n"); nl !== -1 && !stopped; nl = chunk.indexOf("\n", start)) {
            emit(pending + chunk.slice(start, nl))
            pending = ""
            start = nl + 1
          }
          // One line longer than any window could show is kept only up to MAX_LINE characters.
          if (!stopped && pending.length < MAX_LINE)
            pending += sliceWhole(chunk, start, start + MAX_LINE - pending.length)
          return !stopped
        })
      ),
      Effect.andThen(
        Effect.sync(() => {
          if (pending.length > 0) emit(pending)
        })
      )
    )
  })
