/** The live output of one call: what the tool emits, spooled into a store writer as it arrives. */
import { Effect } from "effect"
import type { OutputView, OutputWriter } from "../output/spill.ts"
import type { CaptureWriter, PutResult } from "../output/store.ts"
import type { ToolFailure } from "../tool/errors.ts"

/**
 * What a tool emits while it runs: the partial output (and, for a tool that returns
 * `streamed: true`, the whole output). It goes into a store writer as it arrives, so an
 * output far larger than memory spills to the store's file instead of growing the process.
 */
export class LiveOutput {
  private writer: OutputWriter | undefined
  private captured = false
  private readonly open: () => Effect.Effect<OutputWriter>
  private readonly openCapture: () => Effect.Effect<CaptureWriter, ToolFailure>
  private readonly show: (chunk: string, offset: number) => Effect.Effect<void>
  constructor(
    open: () => Effect.Effect<OutputWriter>,
    openCapture: () => Effect.Effect<CaptureWriter, ToolFailure>,
    show: (chunk: string, offset: number) => Effect.Effect<void>
  ) {
    this.open = open
    this.openCapture = openCapture
    this.show = show
  }
  get size(): number {
    return this.writer?.chars() ?? 0
  }
  /** True once the tool emitted something (or opened a capture): there is a writer to settle or discard. */
  get active(): boolean {
    return this.writer !== undefined
  }
  /** The output so far, while it is held in memory; "" once it spilled. */
  get text(): string {
    return this.writer?.text() ?? ""
  }
  /** True when the output outgrew memory: read it through commit, never as one string. */
  get spilled(): boolean {
    return this.writer !== undefined && !this.writer.inMemory()
  }
  /** A file the tool's child writes into; the capture shows what arrives itself. */
  capture(): Effect.Effect<CaptureWriter, ToolFailure> {
    return Effect.suspend(() => {
      if (this.writer !== undefined)
        return Effect.die(new Error("ctx.capture must be opened before anything is emitted"))
      this.captured = true
      return Effect.map(this.openCapture(), (w) => {
        this.writer = w
        return w
      })
    })
  }
  add(chunk: string): Effect.Effect<void> {
    return Effect.suspend(() =>
      this.writer === undefined
        ? Effect.map(this.open(), (w) => {
            this.writer = w
          })
        : Effect.void
    ).pipe(
      Effect.andThen(
        Effect.suspend(() => {
          if (this.captured) return this.writer!.write(chunk)
          const offset = this.writer!.chars()
          return this.writer!.write(chunk).pipe(Effect.andThen(this.show(chunk, offset)))
        })
      )
    )
  }
  /**
   * Brings the output up to date (a capture reads its file to the end) before it is read. Like
   * discard, it is the writer's as it is when asked for: nothing to do for a tool that emitted
   * nothing, most tools.
   */
  get settle(): Effect.Effect<void> {
    return this.writer?.settle ?? Effect.void
  }
  commit(): Effect.Effect<{ readonly result: PutResult; readonly view: OutputView }> {
    return this.writer!.commit
  }
  get discard(): Effect.Effect<void> {
    return this.writer?.discard ?? Effect.void
  }
}
