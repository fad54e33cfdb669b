/**
 * `code`: the model writes one program that calls the tools (docs/code-mode.md). The program runs
 * in QuickJS (src/code/runtime.ts) with nothing of the host but `tools`; each call it makes is
 * dispatched through the dispatcher this call runs under (its CurrentDispatcher, else the
 * system's), on the same path as a direct call (src/code/bridge.ts). So a program is exactly as
 * safe as the calls it makes: it can never reach a tool or a file its caller could not.
 *
 * Registered by `codeLayer`, which the `code` surface (and ToolSystem's `code` option) adds.
 */
import { Duration, Effect, Layer, Option, Schema } from "effect"
import { makeBridge, type NestedCall } from "../code/bridge.ts"
import { describeCode } from "../code/description.ts"
import { type CodeLimits, resolveLimits } from "../code/limits.ts"
import { runProgram } from "../code/runtime.ts"
import { warm } from "../code/thread.ts"
import { CurrentDispatcher, Dispatcher, type DispatcherShape } from "../dispatch/dispatcher.ts"
import type { CallContext } from "../orchestrator/context.ts"
import { type Catalog, registryCatalog } from "../orchestrator/orchestrator.ts"
import { OutputStore } from "../output/store.ts"
import { allowAllEngine } from "../permission/allow-all.ts"
import { PermissionEngine, type PermissionEngineShape } from "../permission/engine.ts"
import { ToolRegistry } from "../registry/registry.ts"
import { plural } from "../text/plural.ts"
import { fail } from "../tool/errors.ts"
import { defineTool, type Tool, type ToolContext } from "../tool/tool.ts"

export const CODE_TOOL = "code"

export interface CodeToolOptions {
  /** Limits over the defaults (src/code/limits.ts); the FREECODE_CODE_* variables win. */
  readonly limits?: Partial<CodeLimits>
}

const Parameters = Schema.Struct({
  program: Schema.String.annotate({
    description:
      "The program: the body of an async JavaScript function (await and return work at the top level). Call tools as `await tools.read({ filePath })`."
  })
})

/** The summary of a program's calls: counts by status, then one line per call that did not succeed. */
export const callSummary = (calls: ReadonlyArray<NestedCall>, overLimit = 0): string => {
  if (calls.length === 0) return ""
  const counts = new Map<string, number>()
  for (const c of calls) counts.set(c.status, (counts.get(c.status) ?? 0) + 1)
  const head = `[${plural(calls.length, "tool call")}: ${[...counts].map(([s, n]) => `${n} ${s}`).join(", ")}]`
  const failed = calls.filter((c) => c.status !== "ok").map((c) => `- ${c.id} ${c.tool} ${c.status}: ${c.error ?? ""}`)
  const over = overLimit === 0 ? [] : [`- ${plural(overLimit, "more call")} refused: past the limit of tool calls`]
  return [head, ...failed, ...over].join("\n")
}

interface CodeDeps {
  readonly base: DispatcherShape
  readonly catalog: Catalog
  readonly store: OutputStore["Service"]
  readonly engine: PermissionEngineShape
  readonly limits: CodeLimits
  /** The description now: read each time the tool is declared (see liveDescription). */
  readonly describe: () => string
}

/** What a dispatcher's program may reach: its tools, less those its rules always refuse and less programs. */
const reachable = (tools: ReadonlyArray<Tool>, dispatcher: DispatcherShape, engine: PermissionEngineShape) =>
  programReach(tools).filter((t) => engine.alwaysRefused(t, dispatcher.chain) === undefined)

/** The context a program's calls inherit from the program's own call: session, cancel, approver. */
const nestedContext = (ctx: ToolContext): CallContext => {
  const c = ctx.caller
  return {
    sessionId: ctx.sessionId,
    canSeeImages: ctx.canSeeImages,
    ...(c?.cancelled === undefined ? {} : { cancelled: c.cancelled }),
    ...(c?.approve === undefined ? {} : { approve: c.approve })
  }
}

/**
 * The description for what `base` reaches now. MCP servers connect after the tool is registered,
 * and their lists change: so it is made again whenever the registry's list has changed (a new
 * list is a new array), and never per declaration otherwise.
 */
export const liveDescription = (
  registry: ToolRegistry["Service"],
  base: DispatcherShape,
  engine: PermissionEngineShape,
  limits: CodeLimits
): (() => string) => {
  let seen: ReadonlyArray<Tool> | undefined
  let text = ""
  return () => {
    const all = registry.toolsNow()
    if (all !== seen) {
      seen = all
      const mine = all.filter((t) => base.chain.every((p) => p.tools(t)))
      text = describeCode(reachable(mine, base, engine), limits)
    }
    return text
  }
}

export const makeCodeTool = (deps: CodeDeps): Tool => {
  const tool: Tool = {
    ...defineCodeTool(deps),
    // Declared for a caller narrowed by a profile: the API of what that caller reaches.
    describeIn: (reach) => describeCode(programReach(reach), deps.limits)
  }
  // Declared from the registry itself: read whenever it is declared (see liveDescription).
  return Object.defineProperty(tool, "description", { get: deps.describe, enumerable: true, configurable: true })
}

/** A caller's reach less the tools that run programs. */
const programReach = (tools: ReadonlyArray<Tool>) => tools.filter((t) => !t.operations.includes("program.run"))

const defineCodeTool = (deps: CodeDeps) =>
  defineTool({
    id: CODE_TOOL,
    description: "",
    parameters: Parameters,
    // Its calls decide for themselves; the program itself is never retried and never read-only.
    mutates: true,
    retrySafe: false,
    interruptBehavior: "cancel",
    timeout: Duration.millis(deps.limits.wallMs + 30_000),
    permissions: { operations: ["program.run"] },
    execute: ({ program }, ctx) =>
      Effect.gen(function* () {
        // Whatever name or route reached it: a program's call never starts another program.
        if (ctx.caller?.parentCallId !== undefined) {
          return yield* fail("A program cannot run a program: call the tools it would call directly.")
        }
        const dispatcher = (yield* CurrentDispatcher) ?? deps.base
        const tools = reachable(yield* dispatcher.tools, dispatcher, deps.engine)
        const bridge = makeBridge({
          dispatcher,
          catalog: deps.catalog,
          tools,
          parentCallId: ctx.callId,
          context: nestedContext(ctx),
          store: deps.store,
          limits: deps.limits,
          programTools: new Set([CODE_TOOL])
        })
        const outcome = yield* runProgram(program, bridge.host, deps.limits)
        // Calls past the limit are refused inside the interpreter, without a round trip: counted, not listed.
        const over = Math.max(bridge.overLimit(), (outcome.made ?? 0) - bridge.calls.length)
        const summary = callSummary(bridge.calls, over)
        const metadata = { end: outcome.end, calls: bridge.calls, refusedOverLimit: over }
        if (outcome.end !== "ok") {
          const printed = outcome.output === "" ? "" : `\nOutput before it ended:\n${outcome.output}`
          return yield* fail(`${outcome.message}${printed}${summary === "" ? "" : `\n${summary}`}`, metadata)
        }
        const parts = [outcome.output, summary].filter((p) => p !== "")
        return {
          title: `program: ${plural(bridge.calls.length, "tool call")}`,
          output: parts.length === 0 ? "(the program printed and returned nothing)" : parts.join("\n"),
          metadata
        }
      })
  })

/**
 * Registers `code` over the system's Dispatcher (the plain one, never a surface's: a program's
 * calls resolve every tool the rules allow, whatever is declared to the model).
 */
export const codeLayer = (options: CodeToolOptions = {}) =>
  Layer.effectDiscard(
    Effect.gen(function* () {
      const registry = yield* ToolRegistry
      const base = yield* Dispatcher
      const store = yield* OutputStore
      // Without a permission engine in the system (a test's), no rule refuses anything: the allow-all one.
      const engine = Option.getOrElse(yield* Effect.serviceOption(PermissionEngine), () => allowAllEngine)
      const limits = resolveLimits(options.limits, process.env)
      const describe = liveDescription(registry, base, engine, limits)
      const catalog = registryCatalog(registry)
      yield* registry.register(makeCodeTool({ base, catalog, store, engine, limits, describe }))
      // The first program should not wait for a thread and the interpreter to load.
      warm()
    }).pipe(Effect.orDie)
  )
