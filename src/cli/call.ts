/** `freecode-tools call TOOL [JSON_ARGS]`: one call through the Dispatcher, non-interactive. */
import { randomUUID } from "node:crypto"
import { Context, Effect, Option } from "effect"
import { Argument, Command } from "effect/cli"
import { Dispatcher } from "../dispatch/dispatcher.ts"
import { ToolSurface } from "../surface/surface.ts"
import { EXIT_FAILED, ExitCode, Misuse } from "./errors.ts"
import { json, sessionFlags } from "./flags.ts"
import { Io } from "./io.ts"
import {
  announceAutoDeferral,
  announceSandboxUnavailable,
  buildToolSystem,
  callContext,
  checkOptions
} from "./system.ts"

const parseArgs = (text: Option.Option<string>): Effect.Effect<unknown, Misuse> =>
  Option.match(text, {
    onNone: () => Effect.succeed({}),
    onSome: (raw) =>
      Effect.try({
        try: () => JSON.parse(raw) as unknown,
        catch: (e) =>
          new Misuse({
            message: `JSON_ARGS is not valid JSON (${(e as Error).message}). Give one JSON object, e.g. '{"filePath":"README.md"}' for read.`
          })
      })
  })

/**
 * A call that ran a process (bash) and says how it exited ends `call` with that code, so a
 * script can use `call bash` as it would the command; a tool that reports none exits 0.
 */
const processExitCode = (metadata: Readonly<Record<string, unknown>>): number => {
  const code = metadata.exitCode
  return typeof code === "number" && Number.isInteger(code) && code >= 0 && code <= 255 ? code : 0
}

const withNewline = (text: string) => (text.length === 0 || text.endsWith("\n") ? text : `${text}\n`)

export const callCommand = Command.make(
  "call",
  {
    tool: Argument.String("tool").pipe(
      Argument.withMetavar("TOOL"),
      Argument.withDescription("The tool to call (`freecode-tools tools` lists them).")
    ),
    args: Argument.String("json-args").pipe(
      Argument.withMetavar("JSON_ARGS"),
      Argument.withDescription("The arguments as one JSON object (default {}). Quote it for the shell."),
      Argument.optional
    ),
    ...sessionFlags,
    json
  },
  Effect.fn("cli.call")(function* (input) {
    const io = yield* Io
    const args = yield* parseArgs(input.args)
    const setup = yield* checkOptions(input)
    const system = yield* buildToolSystem(setup)
    yield* announceAutoDeferral(Context.get(system, ToolSurface))
    if (input.tool === "bash") yield* announceSandboxUnavailable(system)
    const dispatcher = Context.get(system, Dispatcher)
    const { context } = yield* callContext(input)
    const result = yield* dispatcher.dispatch(
      { id: `cli_${randomUUID().slice(0, 8)}`, name: input.tool, args },
      context
    )
    if (input.json) {
      yield* io.out(`${JSON.stringify(result)}\n`)
    } else {
      yield* io.out(withNewline(result.modelOutput))
      if (result.status !== "ok") yield* io.err(`status: ${result.status}\n`)
    }
    if (result.status !== "ok") return yield* new ExitCode({ code: EXIT_FAILED })
    const code = processExitCode(result.metadata)
    if (code !== 0) return yield* new ExitCode({ code })
  }, Effect.scoped)
).pipe(
  Command.withDescription(
    "Make one tool call through the Dispatcher and print the model's copy of the output (with --json, the whole ToolResult as one JSON line). Exit 0 when the status is ok, 1 otherwise, 2 on misuse; a call that ran a command (bash) with status ok exits with the command's own exit code. Calls that ask for approval are refused unless --yes is given. Ctrl-C cancels a cancellable tool, which then returns status 'interrupted' with its partial output."
  ),
  Command.withShortDescription("Make one tool call")
)
