/**
 * Runs one program on an interpreter thread (thread.ts) and serves its calls: each `call`
 * message starts the nested call (in the order the program made them, so the host can order side
 * effects), and its reply goes back as a message. The wall time is the host's to keep: at the
 * deadline the thread is told to stop, and a thread that does not answer (stuck in one native
 * step) is terminated. Every end is a value; nothing of the host crosses into the program but
 * the JSON text of replies.
 */
import type { Worker } from "node:worker_threads"
import { Effect, FiberSet, Option, Queue, type Scope } from "effect"
import type { CodeLimits } from "./limits.ts"
import { stripTypes } from "./strip.ts"
import { acquire, release } from "./thread.ts"

/** How a program ended. */
export type ProgramEnd = "ok" | "error" | "timeout" | "memory" | "stack" | "output" | "stalled" | "crashed"

export interface ProgramOutcome {
  readonly end: ProgramEnd
  /** What the program printed, then what it returned. */
  readonly output: string
  /** Set when end is not "ok": what happened, in words for the model. */
  readonly message?: string
  /** Tool calls the program made, those refused at its call limit included (when known). */
  readonly made?: number
}

/** What the program may reach: the tools by identifier, each call started in program order. */
export interface ProgramHost {
  /** [identifier, tool name] pairs: `tools.<identifier>(args)` calls that tool. */
  readonly names: ReadonlyArray<readonly [string, string]>
  /**
   * Called synchronously, in the order the program made its calls; the effect it returns runs
   * the call and yields the reply's JSON ({ok, value} or {ok: false, error}).
   */
  readonly call: (name: string, argsJson: string) => Effect.Effect<string>
  /** tools.search: the reply's JSON, answered at once. */
  readonly search: (query: string) => string
}

/** How long a thread told to stop has to answer before it is terminated. */
const GRACE_MS = 1_000

const MESSAGES: Record<Exclude<ProgramEnd, "ok" | "error">, (l: CodeLimits) => string> = {
  timeout: (l) => `The program ran past its wall time (${l.wallMs} ms) and was stopped.`,
  memory: (l) => `The program ran out of memory (limit ${l.memoryBytes} bytes) and was stopped.`,
  stack: () => "The program's recursion ran past its stack limit and was stopped.",
  output: (l) => `The program printed more than ${l.outputChars} characters and was stopped.`,
  stalled: () =>
    "The program waited on a promise that nothing can settle (no tool call was running). Await only tool calls.",
  crashed: () => "The program's interpreter failed and was stopped; the host is unaffected. Simplify the program."
}

type FromThread =
  | {
      readonly type: "call"
      readonly n: number
      readonly name: string
      readonly json: string
      readonly search: boolean
    }
  | { readonly type: "end"; readonly outcome: ThreadOutcome; readonly healthy: boolean }
  | { readonly type: "dead" }

interface ThreadOutcome {
  readonly end: ProgramEnd | "syntax"
  readonly output?: string
  readonly message?: string
  /** end "ok": the returned value as text, and the characters printed before it. */
  readonly value?: string
  readonly chars?: number
  readonly made?: number
}

const toOutcome = (o: ThreadOutcome, limits: CodeLimits): ProgramOutcome => {
  const made = o.made === undefined ? {} : { made: o.made }
  return { ...endOf(o, limits), ...made }
}

const endOf = (o: ThreadOutcome, limits: CodeLimits): ProgramOutcome => {
  const output = o.output ?? ""
  switch (o.end) {
    case "ok": {
      const value = o.value ?? ""
      if ((o.chars ?? 0) + value.length > limits.outputChars)
        return { end: "output", output, message: MESSAGES.output(limits) }
      return { end: "ok", output: value === "" ? output : output === "" ? value : `${output}\n${value}` }
    }
    case "syntax":
      return { end: "error", output: "", message: `The program does not parse: ${o.message ?? "syntax error"}` }
    case "error":
      return { end: "error", output, message: `The program threw ${o.message ?? "an error"}` }
    default:
      return { end: o.end, output, message: MESSAGES[o.end](limits) }
  }
}

/** One run on one thread; "syntax" is returned as is, so the caller can retry with types stripped. */
const runOnce = (source: string, host: ProgramHost, limits: CodeLimits) =>
  Effect.gen(function* (): Effect.fn.Return<ThreadOutcome, never, Scope.Scope> {
    const worker: Worker = acquire()
    const inbox = yield* Queue.unbounded<FromThread>()
    let ended = false
    yield* Effect.addFinalizer(() =>
      Effect.sync(() => {
        if (!ended) {
          worker.removeAllListeners()
          void worker.terminate()
        }
      })
    )
    worker.on("message", (m: FromThread) => Queue.offerUnsafe(inbox, m))
    worker.on("error", () => Queue.offerUnsafe(inbox, { type: "dead" }))
    worker.on("exit", () => Queue.offerUnsafe(inbox, { type: "dead" }))
    const fibers = yield* FiberSet.make<void>()
    const deadline = Date.now() + limits.wallMs
    let stopping: number | undefined
    worker.postMessage({ type: "start", source, names: host.names, limits })
    while (true) {
      const until = (stopping ?? deadline) - Date.now()
      const next = until <= 0 ? Option.none<FromThread>() : yield* Effect.timeoutOption(Queue.take(inbox), until)
      if (Option.isNone(next)) {
        if (stopping !== undefined) return { end: "timeout" }
        // Past the deadline while the program waits on calls (or spins): tell it, then give it a moment.
        worker.postMessage({ type: "abort", reason: "timeout" })
        stopping = Date.now() + GRACE_MS
        continue
      }
      const m = next.value
      if (m.type === "dead") return { end: "crashed" }
      if (m.type === "end") {
        ended = true
        release(worker, m.healthy)
        return m.outcome
      }
      if (m.search) {
        worker.postMessage({ type: "reply", n: m.n, json: host.search(safeParse(m.json)) })
        continue
      }
      const run = host.call(m.name, m.json)
      yield* FiberSet.run(
        fibers,
        Effect.flatMap(run, (json) => Effect.sync(() => worker.postMessage({ type: "reply", n: m.n, json })))
      )
    }
  })

const safeParse = (json: string): string => {
  try {
    return String(JSON.parse(json))
  } catch {
    return ""
  }
}

export const runProgram = (source: string, host: ProgramHost, limits: CodeLimits): Effect.Effect<ProgramOutcome> =>
  Effect.gen(function* () {
    const first = yield* Effect.scoped(runOnce(source, host, limits))
    if (first.end !== "syntax") return toOutcome(first, limits)
    // Not JavaScript: perhaps TypeScript. Its types stripped, it gets one more run.
    const stripped = stripTypes(source)
    if (stripped === undefined || stripped === source) return toOutcome(first, limits)
    const second = yield* Effect.scoped(runOnce(stripped, host, limits))
    return toOutcome(second.end === "syntax" ? first : second, limits)
  }).pipe(
    Effect.catchDefect(() =>
      Effect.succeed<ProgramOutcome>({ end: "crashed", output: "", message: MESSAGES.crashed(limits) })
    )
  )
