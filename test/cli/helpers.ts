/** Runs the real CLI (`node src/cli/main.ts`) as a child process, and a CLI in-process with test tools. */
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { NodeServices } from "@effect/platform-node"
import { Deferred, Effect, Layer, Option } from "effect"
import { testToolSystem } from "../../layers/test.ts"
import { runCli } from "../../src/cli/app.ts"
import { Misuse } from "../../src/cli/errors.ts"
import { Interrupts } from "../../src/cli/interrupts.ts"
import { Io } from "../../src/cli/io.ts"
import { ToolSystemFactory } from "../../src/cli/system.ts"
import type { Tool } from "../../src/tool/tool.ts"
import type { BuiltinRequirements } from "../../src/tools/index.ts"

export const REPO = NodePath.resolve(import.meta.dirname, "../..")
const MAIN = NodePath.join(REPO, "src/cli/main.ts")

/** A temp project with a few real files; removed by the returned cleanup. */
export const makeProject = (files: Record<string, string> = {}) => {
  const root = NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "freecode-cli-"))
  const all: Record<string, string> = {
    "README.md": "# Demo\n\nA small project.\n",
    "src/main.ts": 'export const greet = (name: string) => "hello " + name\n',
    ...files
  }
  for (const [path, text] of Object.entries(all)) {
    NodeFs.mkdirSync(NodePath.dirname(NodePath.join(root, path)), { recursive: true })
    NodeFs.writeFileSync(NodePath.join(root, path), text)
  }
  return { root, cleanup: () => NodeFs.rmSync(root, { recursive: true, force: true }) }
}

export interface Finished {
  readonly code: number | null
  readonly signal: NodeJS.Signals | null
  readonly stdout: string
  readonly stderr: string
}

const start = (args: ReadonlyArray<string>): ChildProcessWithoutNullStreams =>
  spawn(process.execPath, [MAIN, ...args], { cwd: REPO, env: { ...process.env, NO_COLOR: "1" } })

const finished = (child: ChildProcessWithoutNullStreams, out: { stdout: string; stderr: string }) =>
  new Promise<Finished>((resolve, reject) => {
    child.on("error", reject)
    child.on("close", (code, signal) => resolve({ code, signal, stdout: out.stdout, stderr: out.stderr }))
  })

/** Runs the CLI to the end, with `input` on stdin. */
export const runProcess = (args: ReadonlyArray<string>, input = ""): Promise<Finished> => {
  const child = start(args)
  const out = { stdout: "", stderr: "" }
  child.stdout.on("data", (b: Buffer) => (out.stdout += b.toString()))
  child.stderr.on("data", (b: Buffer) => (out.stderr += b.toString()))
  child.stdin.end(input)
  return finished(child, out)
}

/** A CLI process driven one stdin line at a time; reads stdout line by line as it comes. */
export const driveProcess = (args: ReadonlyArray<string>) => {
  const child = start(args)
  const out = { stdout: "", stderr: "" }
  const lines: Array<string> = []
  let partial = ""
  let wake: (() => void) | undefined
  child.stdout.on("data", (b: Buffer) => {
    out.stdout += b.toString()
    partial += b.toString()
    const parts = partial.split("\n")
    partial = parts.pop()!
    lines.push(...parts)
    wake?.()
  })
  child.stderr.on("data", (b: Buffer) => {
    out.stderr += b.toString()
    wake?.()
  })
  const done = finished(child, out)
  let read = 0
  return {
    child,
    send: (line: string) => void child.stdin.write(`${line}\n`),
    end: () => child.stdin.end(),
    /** Waits for `n` more stdout lines, failing after `ms`. */
    take: async (n: number, ms = 10_000): Promise<Array<string>> => {
      const deadline = Date.now() + ms
      while (lines.length < read + n) {
        const left = deadline - Date.now()
        if (left <= 0)
          throw new Error(
            `timed out waiting for ${n} line(s); stdout so far: ${JSON.stringify(out.stdout)}; stderr: ${out.stderr}`
          )
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, Math.min(left, 200))
          wake = () => {
            clearTimeout(timer)
            resolve()
          }
        })
      }
      const taken = lines.slice(read, read + n)
      read += n
      return taken
    },
    /** Ends the process if it is still running (a failed test must not leave it behind). */
    kill: () => void (child.exitCode === null && child.signalCode === null && child.kill("SIGKILL")),
    /** Every stdout line received so far. */
    received: () => [...lines],
    stderr: () => out.stderr,
    done
  }
}

/** What an in-process run printed, and its exit code. */
export interface InProcess {
  readonly code: number
  readonly stdout: string
  readonly stderr: string
}

/**
 * Runs the CLI in this process on a test tool system: `stdin` lines feed `run -`, and
 * `cancel` (when given) is the Ctrl-C the CLI listens for.
 */
export const runInProcess = (
  argv: ReadonlyArray<string>,
  options: {
    readonly tools: ReadonlyArray<Tool<BuiltinRequirements>>
    readonly stdin?: ReadonlyArray<string>
    readonly cancel?: Deferred.Deferred<void>
    /** Called with the stdout text after each write. */
    readonly onOut?: (text: string) => Effect.Effect<void>
  }
): Effect.Effect<InProcess> =>
  Effect.gen(function* () {
    const out: Array<string> = []
    const err: Array<string> = []
    const queue = [...(options.stdin ?? [])]
    const io = Io.of({
      out: (text) => Effect.sync(() => void out.push(text)).pipe(Effect.andThen(options.onOut?.(text) ?? Effect.void)),
      err: (text) => Effect.sync(() => void err.push(text)),
      lines: (source) =>
        source === "-"
          ? Effect.succeed({ next: Effect.sync(() => Option.fromNullishOr(queue.shift())) })
          : Effect.fail(new Misuse({ message: `cannot read ${source}: in-process tests read stdin only` }))
    })
    const cancel = options.cancel ?? (yield* Deferred.make<void>())
    const services = Layer.mergeAll(
      NodeServices.layer,
      Layer.succeed(Io, io),
      Interrupts.layerFrom(cancel),
      ToolSystemFactory.layer((root) => testToolSystem({ root, tools: options.tools }))
    )
    const code = yield* runCli(argv, "9.9.9").pipe(Effect.provide(services))
    return { code, stdout: out.join(""), stderr: err.join("") }
  })

/** Parses each non-empty line of JSONL. */
export const jsonLines = (text: string): Array<Record<string, unknown>> =>
  text
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((l) => JSON.parse(l) as Record<string, unknown>)
