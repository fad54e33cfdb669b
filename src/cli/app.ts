/**
 * The `freecode-tools` command tree and its runner. The runner owns the exit codes: 0 success,
 * 1 a call whose status is not ok, 2 misuse (parse errors included), 130 Ctrl-C in `run`.
 * Parse errors print a short message and a pointer to --help on stderr, never the whole help.
 */
import { Cause, Context, Effect, Exit } from "effect"
import { CliConfig, CliError, CliOutput, Command, GlobalFlag, TerminalCapabilities } from "effect/cli"
import { callCommand } from "./call.ts"
import { describeError, EXIT_FAILED, EXIT_INTERRUPTED, EXIT_MISUSE, EXIT_OK, ExitCode, Misuse } from "./errors.ts"
import type { Interrupts } from "./interrupts.ts"
import { Io } from "./io.ts"
import { mcpCommand } from "./mcp.ts"
import { mcpAuthCommand } from "./mcp-auth.ts"
import { runCommand } from "./run.ts"
import type { ToolSystemFactory } from "./system.ts"
import { toolsCommand } from "./tools.ts"
import { trustCommand } from "./trust.ts"
import { packageVersion } from "./version.ts"

export const NAME = "freecode-tools"

export const cli = Command.make(NAME).pipe(
  Command.withDescription(
    "The tool layer of a coding agent, from the command line: list the tools and what they cost (tools), make one call (call), or drive whole turns from JSONL (run)."
  ),
  Command.withSubcommands([toolsCommand, callCommand, runCommand, mcpCommand, mcpAuthCommand, trustCommand])
)

/** Everything the runner needs from outside. */
export type CliServices = Io | Interrupts | ToolSystemFactory | Command.Environment

const formatter: Effect.Effect<CliOutput.Formatter> = Effect.map(
  Effect.context<never>(),
  (context) =>
    Context.getOrUndefined(context, CliOutput.Formatter) ??
    CliOutput.defaultFormatter({ colors: Context.get(context, TerminalCapabilities.TerminalCapabilities).canColor })
)

const presenter = (io: Io["Service"]): CliOutput.Presenter => ({
  present: (event) =>
    Effect.gen(function* () {
      switch (event._tag) {
        case "Version":
          return yield* io.out(`${event.version}\n`)
        case "Help": {
          const text = `${(yield* formatter).formatHelpDoc(event.helpDoc)}\n`
          // Help nobody asked for (a command without a subcommand) is a misuse answer: stderr.
          return yield* event.reason === "Requested" ? io.out(text) : io.err(text)
        }
        case "InvalidInvocation": {
          const command = event.commandPath.join(" ")
          const lines = event.errors.map((e) => `${command}: ${e.message}`)
          return yield* io.err(`${lines.join("\n")}\nRun '${command} --help' for usage.\n`)
        }
      }
    })
})

const cliConfig = CliConfig.make({ builtIns: [GlobalFlag.Help, GlobalFlag.Version] })

/** Runs the CLI on `argv` (without the program name) and returns the exit code. */
export const runCli = (
  argv: ReadonlyArray<string>,
  version: string = packageVersion()
): Effect.Effect<number, never, CliServices> =>
  Effect.gen(function* () {
    const io = yield* Io
    const exit = yield* Command.runWith(cli, { version })(argv).pipe(
      Effect.provideService(CliOutput.Presenter, presenter(io)),
      Effect.provideService(CliConfig.CliConfig, cliConfig),
      Effect.exit
    )
    if (Exit.isSuccess(exit)) return EXIT_OK
    if (Cause.hasInterruptsOnly(exit.cause)) return EXIT_INTERRUPTED
    const error = Cause.squash(exit.cause)
    if (error instanceof ExitCode) return error.code
    if (error instanceof Misuse) {
      yield* io.err(`${NAME}: ${error.message}\n`)
      return EXIT_MISUSE
    }
    // Parse errors: the presenter has already said what was wrong.
    if (CliError.isCliError(error)) return EXIT_MISUSE
    // A bug: say what failed in words; the trace only when asked for (FREECODE_DEBUG=1).
    const trace =
      process.env.FREECODE_DEBUG === "1" ? `\n${Cause.pretty(exit.cause)}` : " (FREECODE_DEBUG=1 shows the trace)"
    yield* io.err(`${NAME}: internal error: ${describeError(error)}${trace}\n`)
    return EXIT_FAILED
  })
