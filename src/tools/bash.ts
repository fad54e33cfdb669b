/**
 * `bash`: runs a command through /bin/bash -c in the project root — deliberately plain. No
 * allowlist, no command parsing (safety is the permission layer's job) and no cap: the command
 * writes into a file the output store owns (ctx.capture) and the orchestrator cuts the model's
 * copy. The only shaping is declared: the command's class (outputKind) for the compression
 * experiment.
 */
import * as NodePath from "node:path"
import { Duration, Effect, Option, Schema } from "effect"
import { Jobs } from "../jobs/jobs.ts"
import { endedNotice, look } from "../jobs/view.ts"
import { classifyCommand } from "../output/compress/classify.ts"
import { SPILL_BYTES_NAME } from "../output/config.ts"
import { type CommandLine, launchIn, Sandbox, type SandboxShape } from "../sandbox/sandbox.ts"
import { positiveIntOr } from "../setting/positive-int.ts"
import { clip } from "../text/cut.ts"
import { fail, ToolFailure } from "../tool/errors.ts"
import { readableError } from "../tool/readable-error.ts"
import { defineTool, invalidArguments, type ToolContext } from "../tool/tool.ts"
import { signalExitCode, spawnGroupLeader } from "./bash/process-group.ts"

export const DEFAULT_TIMEOUT_MS = 60_000
export const MAX_TIMEOUT_NAME = "FREECODE_BASH_MAX_TIMEOUT_MS"
export const DEFAULT_MAX_TIMEOUT_MS = 600_000

/** How often the output file is read while the command runs, for a UI. */
const FOLLOW_MS = 100
/**
 * How often the output file's size is checked against the limit. The overshoot past the limit
 * is what the command writes in this time plus a kill (tens of MB for `cat /dev/zero`).
 */
const SIZE_CHECK_MS = 10

/** The largest timeout a call may ask for; a set but unusable value fails the call, naming the variable. */
export const maxTimeoutConfig = positiveIntOr(MAX_TIMEOUT_NAME, DEFAULT_MAX_TIMEOUT_MS)

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
      description: "Return at once with a job id (a server, a watcher, a long build); follow it with the job tool."
    })
  ),
  dangerouslyDisableSandbox: Schema.optionalKey(
    Schema.Boolean.annotate({
      description: "Run outside the OS sandbox (needs approval); only after a failure the sandbox caused."
    })
  )
})

/**
 * The command's stdout and stderr both go to `file`, set up by an outer shell that then execs
 * the real one: the command text reaches bash untouched, the two streams interleave exactly as
 * the command wrote them, and the pid stays the process-group leader. stdin is /dev/null: a
 * command waiting on input gets EOF, never hangs the agent. `--norc` on both: bash sources
 * ~/.bashrc for `-c` when its stdin is a socket and SHLVL is unset, as a job's stdin is.
 */
const shellLine = (command: string, file: string): CommandLine => [
  "/bin/bash",
  "--norc",
  "-c",
  'exec /bin/bash --norc -c "$1" > "$2" 2>&1',
  "bash",
  command,
  file
]

/** The sandbox to run in: the system's, unless the call asked to leave it and that is allowed. */
const sandboxFor = (sandbox: SandboxShape, dangerouslyDisableSandbox: boolean | undefined) =>
  dangerouslyDisableSandbox === true && sandbox.settings?.allowUnsandboxedCommands === true ? Sandbox.off : sandbox

/** Told to the model when a command times out: the way to run what does not finish. */
export const TIMEOUT_ADVICE =
  'a server, a watcher or a longer job: run it with "run_in_background": true and follow it with the job tool'

/** How long a background start waits for the job's first output (or its exit) before returning. */
const SETTLE_MS = 1_000

const startInBackground = Effect.fnUntraced(function* (
  command: string,
  description: string | undefined,
  dangerouslyDisableSandbox: boolean | undefined,
  ctx: ToolContext
) {
  const jobs = yield* Jobs
  const sandbox = sandboxFor(yield* Sandbox, dangerouslyDisableSandbox)
  const job = yield* jobs
    .start({ sessionId: ctx.sessionId, command, cwd: ctx.root, sandbox, callId: ctx.callId })
    .pipe(Effect.mapError((e) => fail(e.message)))
  yield* Effect.race(
    Effect.promise(() => job.exited),
    Effect.sleep(SETTLE_MS)
  )
  // The first job of a resumed session: the model learns which of its earlier jobs are gone.
  const earlier = jobs.list(ctx.sessionId).length === 1 ? endedNotice(yield* jobs.ended(ctx.sessionId)) : ""
  return {
    title: `${titleOf(command, description)} (background ${job.id})`,
    output: `${earlier}${look(job)}`,
    metadata: { jobId: job.id, ...(description === undefined ? {} : { description }) }
  }
})

const titleOf = (command: string, description: string | undefined) => {
  if (description !== undefined && description.trim() !== "") return description.trim()
  const first = command.trim().split("\n")[0] ?? ""
  return clip(first, 80, "...")
}

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
  timeoutAdvice: TIMEOUT_ADVICE,
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
  execute: ({ command, description, run_in_background, dangerouslyDisableSandbox }, ctx) =>
    Effect.gen(function* () {
      if (run_in_background === true)
        return yield* startInBackground(command, description, dangerouslyDisableSandbox, ctx)
      if (ctx.capture === undefined) {
        return yield* fail("bash runs only through the orchestrator, which gives it a file for the output.")
      }
      const capture = yield* ctx.capture
      const sandbox = sandboxFor(yield* Sandbox, dangerouslyDisableSandbox)
      // The line and the sandbox's descriptors, handed to spawn: no shell starts to open them.
      const launched = yield* launchIn(sandbox, shellLine(command, capture.path), {
        sessionId: ctx.sessionId,
        cwd: ctx.root,
        writable: [NodePath.dirname(capture.path)]
      }).pipe(Effect.mapError((e) => fail(e.message)))
      const [program, ...args] = launched.line
      const descriptors = launched.descriptors
      // The shell's exit; None when the command was stopped for its size.
      const exit = yield* Effect.scoped(
        Effect.gen(function* () {
          const leader = yield* spawnGroupLeader(program, args, ctx.root, descriptors)
          // A UI sees the output as it arrives (a look is never cut off halfway: it owns the read buffer).
          const follow = Effect.forever(
            Effect.andThen(Effect.sleep(Duration.millis(FOLLOW_MS)), Effect.uninterruptible(capture.follow))
          )
          // The size is the file's own, looked at often: `cat /dev/zero` writes GB a second.
          const sizeWatch = Effect.gen(function* () {
            while (!(yield* capture.overLimit)) yield* Effect.sleep(Duration.millis(SIZE_CHECK_MS))
          })
          // Closing the scope ends the whole process group: a background child (`sleep 100 &`)
          // holding the file does not hold the call, and neither does a command stopped for its size.
          return yield* Effect.raceFirst(
            Effect.map(leader.exit, Option.some),
            Effect.as(Effect.raceFirst(sizeWatch, follow), Option.none())
          )
        })
      ).pipe(
        Effect.mapError((e) =>
          fail(
            `Could not run the command: ${readableError(e)}. Check that /bin/bash exists and the project root is readable.`
          )
        )
      )
      yield* capture.toEnd
      // What the sandbox did about control paths meanwhile (moved one aside, stopped the command).
      const notices = sandbox.audit === undefined ? [] : yield* sandbox.audit(launched)
      const noticeText = notices.map((n) => `[${n}]\n`).join("")
      let newline = capture.chars() > 0 && !capture.endsWithNewline() ? "\n" : ""
      if (noticeText !== "") {
        yield* ctx.emit(`${newline}${noticeText}`)
        newline = ""
      }
      if (Option.isNone(exit)) {
        const limit = capture.limitBytes
        yield* ctx.emit(`${newline}[stopped: output over ${limit} bytes; the command was killed]\n`)
        return yield* new ToolFailure({
          message: `stopped: output over ${limit} bytes (${SPILL_BYTES_NAME}), so the command was killed. The first ${limit} bytes are kept: page them with output {"id": "${ctx.callId}", "offset": …}, or run it again with less output (| tail -n 200, | grep …, or > file and read parts of it).`,
          metadata: { stopped: true, limitBytes: limit, ...(description === undefined ? {} : { description }) },
          partialOutput: ""
        })
      }
      const { code: exitCode, signal } = exit.value
      const code = exitCode ?? (signal === null ? 0 : signalExitCode(signal))
      if (signal !== null && exitCode === null) yield* ctx.emit(`${newline}[killed by ${signal}; exit code ${code}]\n`)
      else if (code !== 0) yield* ctx.emit(`${newline}[exit code ${code}]\n`)
      else if (capture.chars() === 0 && noticeText === "") yield* ctx.emit("(no output)\n")
      return {
        title: titleOf(command, description),
        output: "",
        streamed: true as const,
        metadata: {
          exitCode: code,
          ...(signal === null ? {} : { signal }),
          ...(description === undefined ? {} : { description })
        }
      }
    })
})
