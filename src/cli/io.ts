/**
 * The CLI's standard streams, as a service so in-process tests can swap them for memory.
 * `out` resolves only once the text has been handed to the OS: a program driving `run`
 * waits for each turn's results before it sends the next line.
 */
import * as NodeFs from "node:fs"
import * as NodeReadline from "node:readline"
import { Context, Effect, Layer, Option, type Scope } from "effect"
import { startUpOver } from "../load/start-up.ts"
import { Misuse } from "./errors.ts"

/** Lines of one input, read on demand. */
export interface LineSource {
  /** The next line without its line ending; none at the end of the input. */
  readonly next: Effect.Effect<Option.Option<string>, Misuse>
}

export class Io extends Context.Service<
  Io,
  {
    /** Writes to stdout; completes when the text is flushed. */
    readonly out: (text: string) => Effect.Effect<void>
    /** Writes to stderr; completes when the text is flushed. */
    readonly err: (text: string) => Effect.Effect<void>
    /** Opens a file, or stdin for "-", for reading line by line; closed with the scope. */
    readonly lines: (source: string) => Effect.Effect<LineSource, Misuse, Scope.Scope>
  }
>()("freecode/cli/Io") {
  static readonly layerNode = Layer.sync(Io, () =>
    Io.of({
      out: (text) => Effect.andThen(Effect.sync(startUpOver), write(process.stdout, text)),
      err: (text) => write(process.stderr, text),
      lines: nodeLines
    })
  )
}

const write = (stream: NodeJS.WritableStream, text: string): Effect.Effect<void> =>
  Effect.callback<void>((resume) => {
    // A closed reader (EPIPE) is not this program's failure; main.ts ends the process then.
    stream.write(text, () => resume(Effect.void))
  })

const nodeLines = Effect.fnUntraced(function* (source: string): Effect.fn.Return<LineSource, Misuse, Scope.Scope> {
  const label = source === "-" ? "stdin" : source
  const input: NodeJS.ReadableStream =
    source === "-"
      ? process.stdin
      : yield* Effect.tryPromise({
          try: async () => {
            const stat = await NodeFs.promises.stat(source)
            if (stat.isDirectory()) throw new Error("it is a directory")
            return NodeFs.createReadStream(source)
          },
          catch: (e) => new Misuse({ message: `cannot read ${label}: ${(e as Error).message}` })
        })
  const rl = yield* Effect.acquireRelease(
    Effect.sync(() => NodeReadline.createInterface({ input, crlfDelay: Number.POSITIVE_INFINITY })),
    (rl) => Effect.sync(() => rl.close())
  )
  const iterator = rl[Symbol.asyncIterator]()
  return {
    next: Effect.tryPromise({
      try: () => iterator.next(),
      catch: (e) => new Misuse({ message: `cannot read ${label}: ${(e as Error).message}` })
    }).pipe(Effect.map((r) => (r.done === true ? Option.none() : Option.some(r.value))))
  }
})
