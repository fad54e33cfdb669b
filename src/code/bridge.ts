/**
 * The host's side of the bridge: every `tools.x(args)` a program makes becomes a call dispatched
 * through the dispatcher the program runs under — the same path, rules, profiles, hooks, sandbox,
 * approvals, retries and events as a call the model made itself. What the bridge adds:
 *
 * - the arguments are parsed from the program's JSON text into a host copy and frozen before
 *   the call is dispatched, so what was authorized is what runs;
 * - each call gets its own id (`<program call id>.<n>`), under which its full output is stored,
 *   and carries the program's call id (hooks: `parent_tool_use_id`; events: `parentCallId`);
 * - the order of side effects (order.ts), the per-program call limit, and no program inside a
 *   program;
 * - the reply: the result with its FULL output (read back from the store when the model's copy
 *   was cut), or a rejection naming the status, which the program can catch.
 */
import { Effect, Option } from "effect"
import type { DispatcherShape } from "../dispatch/dispatcher.ts"
import type { CallContext } from "../orchestrator/context.ts"
import type { Catalog } from "../orchestrator/prepare.ts"
import type { OutputStore } from "../output/store.ts"
import { rankTools } from "../surface/search.ts"
import type { ToolResult, ToolStatus } from "../tool/result.ts"
import type { Tool } from "../tool/tool.ts"
import { firstSentence, identifiers, signatureOf } from "./api.ts"
import type { CodeLimits } from "./limits.ts"
import { makeCallOrder } from "./order.ts"
import type { ProgramHost } from "./runtime.ts"

/** One nested call, as the program's result lists it. */
export interface NestedCall {
  readonly id: string
  readonly tool: string
  readonly status: ToolStatus
  /** Why it did not succeed (the rule, hook or error), when it did not. */
  readonly error?: string
}

export interface BridgeDeps {
  readonly dispatcher: DispatcherShape
  /**
   * Where a program's names resolve: the registry, whatever surface the program's own call came
   * through (a sub-agent's CurrentDispatcher may be a surface's, whose catalog declares only a few).
   */
  readonly catalog: Catalog
  /** The tools this dispatcher can reach, hidden ones left out. */
  readonly tools: ReadonlyArray<Tool>
  /** The program's own call: its id, and the context its nested calls inherit. */
  readonly parentCallId: string
  readonly context: CallContext
  readonly store: OutputStore["Service"]
  readonly limits: CodeLimits
  /** Tools that run programs: a program may not call one. */
  readonly programTools: ReadonlySet<string>
}

export interface Bridge {
  readonly host: ProgramHost
  /** Every nested call so far, in the order the program made them (up to the call limit). */
  readonly calls: ReadonlyArray<NestedCall>
  /** Calls refused because the program had made `maxCalls` already (not listed one by one). */
  readonly overLimit: () => number
}

/** A plain JSON value, made read-only all the way down. */
const deepFreeze = <A>(value: A): A => {
  if (typeof value === "object" && value !== null) {
    for (const v of Object.values(value)) deepFreeze(v)
    Object.freeze(value)
  }
  return value
}

const reply = (value: unknown): string => JSON.stringify(value)

const rejection = (id: string, tool: string, status: string, message: string, result?: unknown) =>
  reply({ ok: false, error: { id, tool, status, message, ...(result === undefined ? {} : { result }) } })

/**
 * A reply carrying a result's value, serialized once. Metadata JSON cannot carry (a BigInt, a
 * cycle) makes the whole text fail: then the value goes without it.
 */
const withValue = (make: (value: unknown) => string, value: { readonly metadata: unknown }): string => {
  try {
    return make(value)
  } catch {
    return make({ ...value, metadata: {} })
  }
}

export const makeBridge = (deps: BridgeDeps): Bridge => {
  const { dispatcher, limits, store } = deps
  const calls: Array<NestedCall> = []
  let over = 0
  const order = makeCallOrder()
  const byName = new Map(deps.tools.map((t) => [t.id.toLowerCase(), t]))
  const names = identifiers(deps.tools)
  const context: CallContext = { ...deps.context, parentCallId: deps.parentCallId }

  /**
   * The full output of a result: its model copy unless that was cut, then the stored text;
   * `whole` says whether it is all of the tool's output (a tool's program value is made only then).
   */
  const fullOutput = (result: ToolResult): Effect.Effect<{ readonly output: string; readonly whole: boolean }> => {
    if (!result.truncated) return Effect.succeed({ output: result.modelOutput, whole: true })
    if (result.outputId === undefined) return Effect.succeed({ output: result.modelOutput, whole: false })
    return Effect.map(store.get(context.sessionId, result.outputId), (entry) => {
      if (Option.isNone(entry)) return { output: result.modelOutput, whole: false }
      const e = entry.value
      const text = e.file === undefined ? e.text : `${e.head ?? ""}\n…\n${e.tail ?? ""}`
      if (e.file === undefined && text.length <= limits.resultChars) return { output: text, whole: true }
      return {
        output: `${text.slice(0, limits.resultChars)}\n[${e.chars} characters in all; read the rest with tools.output({ id: ${JSON.stringify(result.id)} })]`,
        whole: false
      }
    })
  }

  /** What a program gets: the result, its full output, and what the tool adds for programs (read's `text`). */
  const toValue = (result: ToolResult, full: { readonly output: string; readonly whole: boolean }) => {
    const made = byName.get(result.tool.toLowerCase())?.programValue
    const extra = made !== undefined && full.whole && result.status === "ok" ? made(full.output, result.metadata) : {}
    return {
      ...extra,
      id: result.id,
      tool: result.tool,
      status: result.status,
      title: result.title,
      output: full.output,
      metadata: result.metadata
    }
  }

  const record = (call: NestedCall) => {
    calls.push(call)
  }

  const call = (name: string, argsJson: string): Effect.Effect<string> => {
    const id = `${deps.parentCallId}.${calls.length + 1}`
    const refuse = (status: ToolStatus, message: string) => {
      record({ id, tool: name, status, error: message })
      return Effect.succeed(rejection(id, name, status, message))
    }
    if (calls.length >= limits.maxCalls) {
      over += 1
      return Effect.succeed(
        rejection(
          `${deps.parentCallId}.${calls.length + over}`,
          name,
          "denied",
          `This program made ${limits.maxCalls} tool calls, its limit; no more are run.`
        )
      )
    }
    if (deps.programTools.has(name.toLowerCase())) {
      return refuse("denied", "A program cannot run a program: call the tools it would call directly.")
    }
    let args: unknown
    try {
      args = deepFreeze(JSON.parse(argsJson) as unknown)
    } catch {
      return refuse("error", `The arguments of ${name} are not JSON.`)
    }
    const slot = calls.length
    record({ id, tool: name, status: "ok" })
    const safe = byName.get(name.toLowerCase())?.concurrencySafe ?? false
    const run = Effect.flatMap(dispatcher.dispatchIn(deps.catalog, { id, name, args }, context), (result) =>
      Effect.map(fullOutput(result), (full) => {
        const value = toValue(result, full)
        const ok = result.status === "ok"
        const message = result.error?.message ?? result.modelOutput
        calls[slot] = ok
          ? { id, tool: result.tool, status: result.status }
          : { id, tool: result.tool, status: result.status, error: firstSentence(message, 300) }
        return ok
          ? withValue((v) => reply({ ok: true, value: v }), value)
          : withValue((v) => rejection(id, result.tool, result.status, message, v), value)
      })
    )
    return order.place(safe, run)
  }

  const search = (query: string): string => {
    const found = rankTools(query, deps.tools, 5)
    const identifier = new Map(names.map(([i, t]) => [t, i]))
    return reply({
      ok: true,
      value: found.map((t) => {
        const ident = identifier.get(t.id)
        return {
          name: t.id,
          call: ident === undefined ? `tools.call(${JSON.stringify(t.id)}, args)` : `tools.${ident}(args)`,
          description: t.description,
          signature: signatureOf(ident ?? "call", t).trim()
        }
      })
    })
  }

  return { host: { names, call, search }, calls, overLimit: () => over }
}
