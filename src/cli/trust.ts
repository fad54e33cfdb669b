/**
 * `freecode-tools trust [DIR] [--forget]`: record (or forget) that a project folder's own
 * programs — its `.mcp.json` servers, hooks and language servers in freecode.json — may start.
 * The record lives in the state folder (FREECODE_STATE_DIR), one entry per folder.
 */
import { Effect, FileSystem, Option, Path } from "effect"
import { Argument, Command, Flag } from "effect/cli"
import { forget, trust } from "../config/trust.ts"
import { Misuse } from "./errors.ts"
import { Io } from "./io.ts"

export const trustCommand = Command.make(
  "trust",
  {
    dir: Argument.String("dir").pipe(
      Argument.withMetavar("DIR"),
      Argument.withDescription("The project folder (default: the current directory)."),
      Argument.optional
    ),
    forget: Flag.Boolean("forget").pipe(
      Flag.withDescription("Stop trusting the folder: its own servers and hooks no longer start."),
      Flag.withDefault(false)
    )
  },
  Effect.fn("cli.trust")(function* (input) {
    const io = yield* Io
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    const dir = path.resolve(Option.getOrElse(input.dir, () => "."))
    const toMisuse = (e: { readonly message: string }) => new Misuse({ message: e.message })
    if (input.forget) {
      const done = yield* forget(dir).pipe(Effect.mapError(toMisuse))
      return yield* io.out(
        done.was
          ? `${done.dir} is no longer trusted: its own MCP servers, hooks and language servers will not start.\n`
          : `${done.dir} was not trusted; nothing to forget.\n`
      )
    }
    const info = yield* fs.stat(dir).pipe(Effect.mapError(() => new Misuse({ message: `${dir} does not exist.` })))
    if (info.type !== "Directory") return yield* new Misuse({ message: `${dir} is not a directory.` })
    const recorded = yield* trust(dir).pipe(Effect.mapError(toMisuse))
    yield* io.out(
      `${recorded} is trusted: its own .mcp.json servers, hooks and language servers in freecode.json will start. 'freecode-tools trust --forget ${recorded}' undoes it.\n`
    )
  })
).pipe(
  Command.withDescription(
    "Trust a project folder, so its own MCP servers (.mcp.json, freecode.json) and hooks and language servers (freecode.json) start; until then they are skipped and the CLI says so. --forget stops trusting it. Recorded in the state folder; --trust trusts a folder for one run instead."
  ),
  Command.withShortDescription("Trust a project folder to start its own servers and hooks")
)
