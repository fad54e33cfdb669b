/** The live output of one call: what the tool emits, spooled into a store writer as it arrives. */
import { Effect } from "effect"
import type { OutputView, OutputWriter } from "../output/spill.ts"
import type { CaptureWriter, PutResult } from "../output/store.ts"
import type { ToolFailure } from "../tool/errors.ts"

/**
 * What a tool emits while it runs: the partial output (and, for a tool that returns
 * `streamed: true`, the whole output). It goes into a store writer, opened on the first emit,
 * so an output far larger than memory spills to the store's file instead of growing the process.
 * Reading it (size, text) is plain; what changes it (add, capture, settle, commit, discard) is
 * an effect, run when asked.
 */
export interface LiveOutput {
  /** Characters so far. */
  readonly size: () => number
  /** The output so far, while it is held in memory; "" once it spilled. */
  readonly text: () => string
  /** True once the tool emitted something (or opened a capture): there is a writer to settle or discard. */
  readonly active: () => boolean
  /** True when the output outgrew memory: read it through commit, never as one string. */
  readonly spilled: () => boolean
  readonly add: (chunk: string) => Effect.Effect<void>
  /** A file the tool's child writes into; the capture shows what arrives itself. */
  readonly capture: () => Effect.Effect<CaptureWriter, ToolFailure>
  /** Brings the output up to date (a capture reads its file to the end) before it is read. */
  readonly settle: () => Effect.Effect<void>
  readonly commit: () => Effect.Effect<{ readonly result: PutResult; readonly view: OutputView }>
  readonly discard: () => Effect.Effect<void>
}

export interface LiveSources {
  readonly open: () => Effect.Effect<OutputWriter>
  readonly openCapture: () => Effect.Effect<CaptureWriter, ToolFailure>
  readonly show: (chunk: string, offset: number) => Effect.Effect<void>
}

export const liveOutput = (sources: LiveSources): LiveOutput => {
  let writer: OutputWriter | undefined
  let captured = false
  const write = (chunk: string): Effect.Effect<void> => {
    const w = writer!
    if (captured) return w.write(chunk)
    const offset = w.chars()
    return Effect.andThen(w.write(chunk), sources.show(chunk, offset))
  }
  return {
    size: () => writer?.chars() ?? 0,
    text: () => writer?.text() ?? "",
    active: () => writer !== undefined,
    spilled: () => writer !== undefined && !writer.inMemory(),
    add: (chunk) =>
      Effect.suspend(() =>
        writer === undefined
          ? Effect.flatMap(sources.open(), (w) => {
              writer = w
              return write(chunk)
            })
          : write(chunk)
      ),
    capture: () =>
      Effect.suspend(() => {
        if (writer !== undefined) return Effect.die(new Error("ctx.capture must be opened before anything is emitted"))
        captured = true
        return Effect.map(sources.openCapture(), (w) => {
          writer = w
          return w
        })
      }),
    settle: () => writer?.settle ?? Effect.void,
    commit: () => writer!.commit,
    discard: () => writer?.discard ?? Effect.void
  }
}
