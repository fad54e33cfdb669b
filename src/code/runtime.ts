/**
 * Runs one program in its own QuickJS runtime and drives it: the interpreter runs until every
 * promise it can settle has settled, then the driver starts the nested calls the program asked
 * for (in the order it asked), waits for the next reply, hands it in, and runs the interpreter
 * again — until the program's promise settles, a limit is hit, or nothing is left to wait for.
 *
 * Nothing of the host crosses into the interpreter but strings: the four functions the prelude
 * receives take and return strings and numbers, and never throw (a host exception would carry
 * its message and stack into the program).
 */
import { Effect, FiberSet, Option, Queue, type Scope } from "effect"
import type { QuickJSContext, QuickJSHandle, QuickJSRuntime } from "quickjs-emscripten-core"
import type { CodeLimits } from "./limits.ts"
import { PRELUDE } from "./prelude.ts"
import { dropModule, quickjsModule } from "./quickjs.ts"
import { stripTypes } from "./strip.ts"

/** How a program ended. Every end is a value; none is an exception in the host. */
export type ProgramEnd = "ok" | "error" | "timeout" | "memory" | "stack" | "output" | "stalled" | "crashed"

export interface ProgramOutcome {
  readonly end: ProgramEnd
  /** What the program printed, then what it returned (or the error it ended with). */
  readonly output: string
  /** Set when end is not "ok": what happened, in words for the model. */
  readonly message?: string
}

/** What the program may reach: the tools by identifier, each call started in program order. */
export interface ProgramHost {
  /** [identifier, tool name] pairs: `tools.<identifier>(args)` calls that tool. */
  readonly names: ReadonlyArray<readonly [string, string]>
  /**
   * Called synchronously, in the order the program made its calls (so the host can order side
   * effects); the effect it returns runs the call and yields the reply's JSON: {ok, value|error}.
   */
  readonly call: (name: string, argsJson: string) => Effect.Effect<string>
  /** tools.search: a JSON array, answered at once. */
  readonly search: (query: string) => string
}

const MESSAGES: Record<Exclude<ProgramEnd, "ok" | "error">, (l: CodeLimits) => string> = {
  timeout: (l) => `The program ran past its wall time (${l.wallMs} ms) and was stopped.`,
  memory: (l) => `The program ran out of memory (limit ${l.memoryBytes} bytes) and was stopped.`,
  stack: () => "The program's recursion ran past its stack limit and was stopped.",
  output: (l) => `The program printed more than ${l.outputChars} characters and was stopped.`,
  stalled: () =>
    "The program waited on a promise that nothing can settle (no tool call was running). Await only tool calls.",
  crashed: () => "The program's interpreter failed and was stopped; the host is unaffected. Simplify the program."
}

/** A thrown value's end: the interpreter's own out-of-memory and stack errors are limits. */
const endOfError = (message: string): ProgramEnd =>
  /out of memory/i.test(message) ? "memory" : /stack overflow|too much recursion/i.test(message) ? "stack" : "error"

interface Reply {
  readonly n: number
  readonly json: string
}

/** Settles every job the interpreter can run now; a trap there is the interpreter failing. */
const settle = (rt: QuickJSRuntime): boolean => {
  const r = rt.executePendingJobs()
  if ("error" in r && r.error !== undefined) r.error.dispose()
  return true
}

export const runProgram = (source: string, host: ProgramHost, limits: CodeLimits): Effect.Effect<ProgramOutcome> =>
  Effect.scoped(
    Effect.gen(function* (): Effect.fn.Return<ProgramOutcome, never, Scope.Scope> {
      const loaded = yield* Effect.tryPromise(quickjsModule).pipe(Effect.option)
      if (Option.isNone(loaded)) return { end: "crashed", output: "", message: MESSAGES.crashed(limits) } as const
      const started = Date.now()
      const deadline = started + limits.wallMs
      const printed: Array<string> = []
      let printedChars = 0
      let stop: ProgramEnd | undefined
      let done: { ok: boolean; text: string } | undefined
      const requests: Array<{ n: number; name: string; json: string }> = []
      let issued = 0

      const rt = loaded.value.newRuntime()
      const vm = rt.newContext()
      const held: Array<QuickJSHandle> = []
      yield* Effect.addFinalizer(() =>
        Effect.sync(() => {
          try {
            for (const h of held) if (h.alive) h.dispose()
            vm.dispose()
            rt.dispose()
          } catch {
            dropModule()
          }
        })
      )
      rt.setMemoryLimit(limits.memoryBytes)
      rt.setMaxStackSize(limits.stackBytes)
      rt.setInterruptHandler(() => {
        if (stop !== undefined) return true
        if (Date.now() > deadline) stop = "timeout"
        return stop !== undefined
      })

      const fn = (name: string, impl: (...args: Array<QuickJSHandle>) => QuickJSHandle | undefined) => {
        const h = vm.newFunction(name, (...args) => {
          try {
            return impl(...args)
          } catch {
            // Never let a host exception (its message, its stack) into the program.
            stop ??= "crashed"
            return undefined
          }
        })
        held.push(h)
        return h
      }
      const hostCall = fn("call", (name, json) => {
        issued += 1
        requests.push({ n: issued, name: vm.getString(name!), json: vm.getString(json!) })
        return vm.newNumber(issued)
      })
      const hostPrint = fn("print", (text) => {
        const s = vm.getString(text!)
        printedChars += s.length + 1
        if (printedChars > limits.outputChars) stop ??= "output"
        else printed.push(s)
        return undefined
      })
      const hostSearch = fn("search", (query) => vm.newString(host.search(vm.getString(query!))))
      const hostDone = fn("done", (ok, text) => {
        done ??= { ok: vm.dump(ok!) === true, text: vm.getString(text!) }
        return undefined
      })
      const crashed = (): ProgramOutcome => ({
        end: "crashed",
        output: printed.join("\n"),
        message: MESSAGES.crashed(limits)
      })
      const names = vm.newString(JSON.stringify(host.names))
      held.push(names)
      // Build the prelude and hand it the host's functions; it returns [deliver, start].
      const prelude = vm.evalCode(PRELUDE, "prelude.js")
      if (prelude.error !== undefined) {
        prelude.error.dispose()
        return crashed()
      }
      held.push(prelude.value)
      const pair = vm.callFunction(prelude.value, vm.undefined, hostCall, hostPrint, hostSearch, hostDone, names)
      if (pair.error !== undefined) {
        pair.error.dispose()
        return crashed()
      }
      held.push(pair.value)
      const deliver = vm.getProp(pair.value, 0)
      const start = vm.getProp(pair.value, 1)
      held.push(deliver, start)

      // The program, as the body of an async function on its first line (line numbers stay).
      let compiled = vm.evalCode(`(async () => {${source}\n})`, "program.js")
      if (compiled.error !== undefined) {
        const stripped = stripTypes(source)
        if (stripped !== undefined && stripped !== source) {
          const retry = vm.evalCode(`(async () => {${stripped}\n})`, "program.js")
          if (retry.error === undefined) {
            compiled.error.dispose()
            compiled = retry
          } else retry.error.dispose()
        }
      }
      if (compiled.error !== undefined) {
        const message = describeHandle(vm, compiled.error)
        compiled.error.dispose()
        return { end: "error", output: "", message: `The program does not parse: ${message}` }
      }
      held.push(compiled.value)
      const begun = vm.callFunction(start, vm.undefined, compiled.value)
      if (begun.error !== undefined) begun.error.dispose()
      else begun.value.dispose()

      const replies = yield* Queue.unbounded<Reply>()
      const fibers = yield* FiberSet.make<void>()
      let inFlight = 0

      while (true) {
        settle(rt)
        if (stop !== undefined || done !== undefined) break
        while (requests.length > 0) {
          const r = requests.shift()!
          inFlight += 1
          const run = host.call(r.name, r.json)
          yield* FiberSet.run(
            fibers,
            Effect.flatMap(run, (json) => Queue.offer(replies, { n: r.n, json }))
          )
        }
        if (inFlight === 0) {
          stop = "stalled"
          break
        }
        const remaining = deadline - Date.now()
        const next = remaining <= 0 ? Option.none<Reply>() : yield* Effect.timeoutOption(Queue.take(replies), remaining)
        if (Option.isNone(next)) {
          stop = "timeout"
          break
        }
        inFlight -= 1
        const n = vm.newNumber(next.value.n)
        const json = vm.newString(next.value.json)
        const delivered = vm.callFunction(deliver, vm.undefined, n, json)
        n.dispose()
        json.dispose()
        if (delivered.error !== undefined) {
          const message = describeHandle(vm, delivered.error)
          delivered.error.dispose()
          stop ??= endOfError(message) === "error" ? "crashed" : endOfError(message)
        } else delivered.value.dispose()
      }

      const output = printed.join("\n")
      if (stop !== undefined)
        return { end: stop, output, message: MESSAGES[stop as Exclude<ProgramEnd, "ok" | "error">](limits) }
      const result = done!
      if (result.ok)
        return {
          end: "ok",
          output: result.text === "" ? output : output === "" ? result.text : `${output}\n${result.text}`
        }
      const end = endOfError(result.text)
      return {
        end,
        output,
        message: end === "error" ? `The program threw ${result.text}` : MESSAGES[end as "memory"](limits)
      }
    })
  ).pipe(
    Effect.catchDefect(() => {
      dropModule()
      return Effect.succeed<ProgramOutcome>({ end: "crashed", output: "", message: MESSAGES.crashed({} as CodeLimits) })
    })
  )

/** An error value's text, read inside the interpreter (never a host object). */
const describeHandle = (vm: QuickJSContext, handle: QuickJSHandle): string => {
  try {
    const v = vm.dump(handle) as unknown
    if (typeof v === "object" && v !== null && "message" in v) {
      const name = "name" in v ? String((v as { name: unknown }).name) : "Error"
      return `${name}: ${String((v as { message: unknown }).message)}`
    }
    return String(v)
  } catch {
    return "an error that cannot be shown"
  }
}
