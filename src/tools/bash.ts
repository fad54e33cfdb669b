/**
 * `bash`: runs a command through /bin/bash -c in the project root — deliberately plain. No
 * allowlist, no command parsing (safety is the permission layer's job) and no cap: the command
 * writes into a file the output store owns (ctx.capture) and the orchestrator cuts the model's
 * copy. The only shaping is declared: the command's class (outputKind) for the compression
 * experiment.
 */

import * as NodePath from "node:path"
import { Config, Duration, Effect, Option, Schema } from "effect"
import { ChildProcess, ChildProcessSpawner } from "effect/process"
import { Jobs } from "../jobs/jobs.ts"
import { look } from "../jobs/view.ts"
import { classifyCommand } from "../output/compress/classify.ts"
import { SPILL_BYTES_NAME } from "../output/config.ts"
import { type CommandLine, Sandbox } from "../sandbox/sandbox.ts"
import { clip } from "../text/cut.ts"
import { fail } from "../tool/errors.ts"
import { defineTool, invalidArguments, type ToolContext } from "../tool/tool.ts"

export const DEFAULT_TIMEOUT_MS = 60_000
export const MAX_TIMEOUT_NAME = "FREECODE_BASH_MAX_TIMEOUT_MS"
export const DEFAULT_MAX_TIMEOUT_MS = 600_000

/** How often the output file is looked at while the command runs (for a UI, and the size limit). */
const FOLLOW_MS = 100

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
  ),
  run_in_background: Schema.optionalKey(
    Schema.Boolean.annotate({
      description:
        "Start it as a background job (a server, a watcher, a long build) and return at once with its id; follow it with the job tool."
    })
  ),
  dangerouslyDisableSandbox: Schema.optionalKey(
    Schema.Boolean.annotate({
      description:
        "Ask to run this one command outside the OS sandbox (it then needs approval). Only when it failed because of the sandbox."
    })
  )
})

/**
 * The command's stdout and stderr both go to `file`, set up by an outer shell that then execs
 * the real one: the command text reaches bash untouched, the two streams interleave exactly as
 * the command wrote them, and the pid stays the process-group leader.
 */
const shellCommand = (command: string, file: string): CommandLine => [
  "/bin/bash",
  "-c",
  'exec /bin/bash -c "$1" > "$2" 2>&1',
  "bash",
  command,
  file
]

const spawnable = ([program, ...args]: CommandLine, cwd: string) =>
  ChildProcess.make(program, args, {
    cwd,
    stdin: "ignore", // a command waiting on input gets EOF, never hangs the agent
    stdout: "ignore",
    stderr: "ignore",
    killSignal: "SIGTERM",
    forceKillAfter: "2 seconds"
  })

const titleOf = (command: string, description: string | undefined) => {
  if (description !== undefined && description.trim() !== "") return description.trim()
  const first = command.trim().split("\n")[0] ?? ""
  return clip(first, 80, "...")
}

/** How long a background start waits for the job's first output (or its exit) before returning. */
const SETTLE_MS = 1_000

const startInBackground = (
  command: string,
  description: string | undefined,
  dangerouslyDisableSandbox: boolean | undefined,
  ctx: ToolContext
) =>
  Effect.gen(function* () {
    const jobs = yield* Jobs
    const sandbox = yield* Sandbox
    const outside = dangerouslyDisableSandbox === true && sandbox.settings?.allowUnsandboxedCommands === true
    const job = yield* jobs
      .start({ sessionId: ctx.sessionId, command, cwd: ctx.root, sandbox: outside ? Sandbox.off : sandbox })
      .pipe(Effect.mapError((e) => fail(e.message)))
    yield* Effect.race(
      Effect.promise(() => job.exited),
      Effect.sleep(SETTLE_MS)
    )
    return {
      title: `${titleOf(command, description)} (background ${job.id})`,
      output: look(job),
      metadata: { jobId: job.id, ...(description === undefined ? {} : { description }) }
    }
  })

export const BashTool = defineTool({
  id: "bash",
  description:
    "Run a shell command with /bin/bash -c in the project root; stdout and stderr come back combined. stdin is closed. When read, ls, glob and grep are among your tools, use them to look at files rather than cat, ls, find or grep.",
  parameters: Parameters,
  concurrencySafe: false,
  mutates: true,
  retrySafe: false,
  interruptBehavior: "cancel",
  timeout: ({ timeout }) => Duration.millis(timeout ?? DEFAULT_TIMEOUT_MS),
  truncate: "both",
  outputKind: ({ command }) => classifyCommand(command),
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
            message: `must be at most ${max} ms, got ${timeout}; run a longer job with "run_in_background": true and follow it with the job tool`
          }
        ])
      }
    }),
  execute: ({ command, description, dangerouslyDisableSandbox, run_in_background }, ctx) =>
    Effect.gen(function* () {
      if (run_in_background === true)
        return yield* startInBackground(command, description, dangerouslyDisableSandbox, ctx)
      if (ctx.capture === undefined) {
        return yield* fail("bash runs only through the orchestrator, which gives it a file for the output.")
      }
      const capture = yield* ctx.capture
      const spawner = yield* ChildProcessSpawner.ChildProcessSpawner
      const sandbox = yield* Sandbox
      const plain = shellCommand(command, capture.path)
      // Outside only when asked and allowed; the permission step has already asked the person.
      const outside = dangerouslyDisableSandbox === true && sandbox.settings?.allowUnsandboxedCommands === true
      const line = outside
        ? plain
        : yield* sandbox
            .wrap(plain, { sessionId: ctx.sessionId, cwd: ctx.root, writable: [NodePath.dirname(capture.path)] })
            .pipe(Effect.mapError((e) => fail(e.message)))
      // Some(code) when the shell exited; None when the command was stopped for its size.
      const exit = yield* Effect.scoped(
        Effect.gen(function* () {
          const handle = yield* spawner.spawn(spawnable(line, ctx.root))
          // A UI sees the output as it arrives; an output past the store's limit stops the command.
          const watch = Effect.gen(function* () {
            while (!capture.overLimit()) {
              yield* Effect.sleep(Duration.millis(FOLLOW_MS))
              yield* capture.follow
            }
          })
          // Closing the scope kills the whole process group: a background child (`sleep 100 &`)
          // holding the file does not hold the call, and neither does a command stopped for its size.
          return yield* Effect.raceFirst(Effect.map(handle.exitCode, Option.some), Effect.as(watch, Option.none()))
        })
      ).pipe(
        Effect.mapError((e) =>
          fail(`Could not run the command: ${e.message}. Check that /bin/bash exists and the project root is readable.`)
        )
      )
      yield* capture.toEnd
      const newline = capture.chars() > 0 && !capture.endsWithNewline() ? "\n" : ""
      const code = Option.isSome(exit) ? Number(exit.value) : undefined
      if (code === undefined) {
        yield* ctx.emit(
          `${newline}[stopped: the command printed more than one call's output may hold on disk (${SPILL_BYTES_NAME}); it was killed]\n`
        )
      } else if (code !== 0) yield* ctx.emit(`${newline}[exit code ${code}]\n`)
      else if (capture.chars() === 0) yield* ctx.emit("(no output)\n")
      return {
        title: titleOf(command, description),
        output: "",
        streamed: true as const,
        metadata: {
          ...(code === undefined ? { stopped: true } : { exitCode: code }),
          ...(description === undefined ? {} : { description })
        }
      }
    })
})
