/**
 * `freecode-tools run [FILE|-]`: drives the tool layer from JSONL, one model turn per line.
 * Each turn's results are written and flushed before the next line is read, so a program on
 * the other end of the pipe can wait for them. One session and one output store for the run.
 */
import { Context, Effect, Option, Result } from "effect"
import { Argument, Command } from "effect/cli"
import { Dispatcher } from "../dispatch/dispatcher.ts"
import { ToolSurface } from "../surface/surface.ts"
import { EXIT_INTERRUPTED, EXIT_MISUSE, ExitCode } from "./errors.ts"
import { sessionFlags } from "./flags.ts"
import { Io } from "./io.ts"
import { malformedLine, parseTurn } from "./protocol.ts"
import { announceAutoDeferral, buildToolSystem, callContext, checkOptions } from "./system.ts"

const line = (value: unknown) => `${JSON.stringify(value)}\n`

export const runCommand = Command.make(
  "run",
  {
    file: Argument.String("file").pipe(
      Argument.withMetavar("FILE"),
      Argument.withDescription("A JSONL file of turns, or - for stdin (the default)."),
      Argument.withDefault("-")
    ),
    ...sessionFlags
  },
  Effect.fn("cli.run")(function* (input) {
    const io = yield* Io
    const setup = yield* checkOptions(input)
    const lines = yield* io.lines(input.file)
    const system = yield* buildToolSystem(setup)
    yield* announceAutoDeferral(Context.get(system, ToolSurface))
    const dispatcher = Context.get(system, Dispatcher)
    const { context, cancellation } = yield* callContext(input)
    const stopped = cancellation.cancelled.pipe(Effect.as("stopped" as const))

    let number = 0
    let malformed = false
    while (true) {
      const next = yield* Effect.raceFirst(lines.next, stopped)
      if (next === "stopped") return yield* new ExitCode({ code: EXIT_INTERRUPTED })
      if (Option.isNone(next)) break
      number++
      if (next.value.trim() === "") continue
      const turn = parseTurn(next.value)
      if (Result.isFailure(turn)) {
        malformed = true
        yield* io.out(line(malformedLine(number, turn.failure)))
        continue
      }
      const results = yield* dispatcher.dispatchBatch(turn.success, context)
      if (results.length > 0) yield* io.out(results.map(line).join(""))
      if (yield* cancellation.requested) return yield* new ExitCode({ code: EXIT_INTERRUPTED })
    }
    if (malformed) return yield* new ExitCode({ code: EXIT_MISUSE })
  }, Effect.scoped)
).pipe(
  Command.withDescription(
    'Read JSONL turns from FILE or stdin: each non-blank line is one model turn, a JSON array of calls [{"id","name","args"}], dispatched as one turn. For each turn, one ToolResult JSON object per line, in call order, flushed before the next line is read. A malformed line gets one {"line","status":"error","modelOutput"} line and the run goes on; the exit code is then 2. Ctrl-C cancels the turn in flight, writes its results and exits 130.'
  ),
  Command.withShortDescription("Dispatch JSONL turns, one result line per call")
)
