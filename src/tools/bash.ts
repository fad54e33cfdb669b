/**
 * `bash`: runs a command through /bin/bash -c in the project root — deliberately plain. No
 * allowlist, no command parsing (safety is the permission layer's job) and no cap: the output
 * streams out through ctx.emit and goes whole into the store; the orchestrator cuts the model's
 * copy. The only shaping done here is classifying the command (metadata.outputKind) for the
 * compression experiment.
 */
import { Config, Duration, Effect, Fiber, Option, Schema, Stream } from "effect"
import { ChildProcess, ChildProcessSpawner } from "effect/process"
import { classifyCommand } from "../output/compress/classify.ts"
import { fail } from "../tool/errors.ts"
import { defineTool, invalidArguments } from "../tool/tool.ts"

export const DEFAULT_TIMEOUT_MS = 60_000
export const MAX_TIMEOUT_NAME = "FREECODE_BASH_MAX_TIMEOUT_MS"
export const DEFAULT_MAX_TIMEOUT_MS = 600_000

/**
 * After the shell exits, output still in the pipe is read to the end; but a background child
 * holding stdout open must not hold the call, so reading stops once nothing has arrived for this long.
 */
const DRAIN_IDLE_MS = 250

/** The largest timeout a call may ask for; a set but unusable value fails the call, naming the variable. */
export const maxTimeoutConfig = Config.Int(MAX_TIMEOUT_NAME).pipe(Config.withDefault(DEFAULT_MAX_TIMEOUT_MS))

const Parameters = Schema.Struct({
  command: Schema.String.annotate({ description: "The command, run with /bin/bash -c in the project root." }),
  timeout: Schema.optionalKey(
    Schema.Int.check(Schema.isGreaterThan(0)).annotate({
      description: `Milliseconds before the command is killed (default ${DEFAULT_TIMEOUT_MS}).`
    })
  ),
  description: Schema.optionalKey(
    Schema.String.annotate({ description: "What the command does, in a few words, for the person watching." })
  )
})

/**
 * stderr joins stdout in the child itself (one pipe), so the two interleave exactly as the
 * command wrote them. The outer shell only sets up the redirect and execs the real one: the
 * command text reaches bash untouched, and the pid stays the process-group leader.
 */
const shellCommand = (command: string, cwd: string) =>
  ChildProcess.make("/bin/bash", ["-c", 'exec /bin/bash -c "$1" 2>&1', "bash", command], {
    cwd,
    stdin: "ignore", // a command waiting on input gets EOF, never hangs the agent
    stderr: "ignore",
    killSignal: "SIGTERM",
    forceKillAfter: "2 seconds"
  })

const titleOf = (command: string, description: string | undefined) => {
  if (description !== undefined && description.trim() !== "") return description.trim()
  const first = command.trim().split("\n")[0] ?? ""
  return first.length > 80 ? `${first.slice(0, 77)}...` : first
}

export const BashTool = defineTool({
  id: "bash",
  description:
    "Run a shell command with /bin/bash -c in the project root; stdout and stderr come back combined. stdin is closed. Use read, ls, glob and grep to look at files instead of cat, ls, find or grep.",
  parameters: Parameters,
  concurrencySafe: false,
  mutates: true,
  retrySafe: false,
  interruptBehavior: "cancel",
  timeout: ({ timeout }) => Duration.millis(timeout ?? DEFAULT_TIMEOUT_MS),
  truncate: "both",
  permissions: { operations: ["shell.exec"] },
  validateInput: ({ command, timeout }) =>
    Effect.gen(function* () {
      if (command.trim() === "") {
        return yield* invalidArguments("bash", [{ path: "command", message: "is empty; give a shell command to run" }])
      }
      const max = yield* maxTimeoutConfig.pipe(
        Effect.mapError((e) =>
          fail(`The ${MAX_TIMEOUT_NAME} setting is invalid (${e.message}); ask the person to fix it.`)
        )
      )
      if (timeout !== undefined && timeout > max) {
        return yield* invalidArguments("bash", [
          {
            path: "timeout",
            message: `must be at most ${max} ms, got ${timeout}; run longer jobs in the background (nohup … &) and check on them`
          }
        ])
      }
    }),
  execute: ({ command, description }, ctx) =>
    Effect.gen(function* () {
      const spawner = yield* ChildProcessSpawner.ChildProcessSpawner
      const outputKind = classifyCommand(command)
      let printed = false
      let lastChar = ""
      let lastDataAt = 0
      const exitCode = yield* Effect.scoped(
        Effect.gen(function* () {
          const handle = yield* spawner.spawn(shellCommand(command, ctx.root))
          const reader = yield* handle.stdout.pipe(
            Stream.decodeText(),
            Stream.runForEach((chunk) => {
              if (chunk.length === 0) return Effect.void
              printed = true
              lastDataAt = Date.now()
              lastChar = chunk[chunk.length - 1]!
              return ctx.emit(chunk)
            }),
            Effect.forkScoped
          )
          const code = yield* handle.exitCode
          // A background child (`sleep 100 &`) may hold stdout open: drain while output flows,
          // then stop. Closing the scope kills the whole process group, grandchildren included.
          lastDataAt = Math.max(lastDataAt, Date.now())
          for (;;) {
            const joined = yield* Fiber.join(reader).pipe(Effect.timeoutOption(Duration.millis(50)), Effect.option)
            if (Option.isNone(joined) || Option.isSome(joined.value)) break // read to the end (or failed)
            if (Date.now() - lastDataAt >= DRAIN_IDLE_MS) break
          }
          return code
        })
      ).pipe(
        Effect.mapError((e) =>
          fail(`Could not run the command: ${e.message}. Check that /bin/bash exists and the project root is readable.`)
        )
      )
      const code = Number(exitCode)
      if (code !== 0) yield* ctx.emit(`${printed && lastChar !== "\n" ? "\n" : ""}[exit code ${code}]\n`)
      else if (!printed) yield* ctx.emit("(no output)\n")
      return {
        title: titleOf(command, description),
        output: "",
        streamed: true as const,
        metadata: { exitCode: code, outputKind, ...(description === undefined ? {} : { description }) }
      }
    })
})
