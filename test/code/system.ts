/**
 * A real tool system with the `code` tool, for the code-mode tests: real files in a temporary
 * project, the real Dispatcher, permission engine, hooks and approval, and the real interpreter.
 */
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { NodeServices } from "@effect/platform-node"
import { Context, Effect, Fiber, Layer, Stream } from "effect"
import type { FreecodeConfigData } from "../../layers/config.ts"
import { toolSystem } from "../../layers/system.ts"
import type { CodeLimits } from "../../src/code/limits.ts"
import { Dispatcher } from "../../src/dispatch/dispatcher.ts"
import { type ToolEvent, ToolEvents } from "../../src/events/events.ts"
import type { FunctionHook } from "../../src/hooks/hooks.ts"
import { OutputConfig } from "../../src/output/config.ts"
import { OutputStore } from "../../src/output/store.ts"
import { Approval, type ApprovalAnswer, type ApprovalQuestion } from "../../src/permission/approval.ts"
import type { ToolResult } from "../../src/tool/result.ts"

export const makeProject = (files: Record<string, string>): string => {
  const root = NodeFs.realpathSync(NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "freecode-code-")))
  for (const [name, text] of Object.entries(files)) {
    NodeFs.mkdirSync(NodePath.dirname(NodePath.join(root, name)), { recursive: true })
    NodeFs.writeFileSync(NodePath.join(root, name), text)
  }
  return root
}

export interface CodeSystemOptions {
  readonly config?: FreecodeConfigData
  readonly hooks?: ReadonlyArray<FunctionHook>
  readonly limits?: Partial<CodeLimits>
  readonly answer?: ApprovalAnswer | ((q: ApprovalQuestion) => ApprovalAnswer)
  readonly asked?: Array<ApprovalQuestion>
}

/** The system's services, built in the caller's scope. */
export const codeSystem = (root: string, options: CodeSystemOptions = {}) =>
  Layer.build(
    toolSystem({
      root,
      config: options.config ?? {},
      outputConfig: OutputConfig.layerWith({}),
      code: { limits: { wallMs: 20_000, ...options.limits } },
      ...(options.hooks === undefined ? {} : { hooks: options.hooks }),
      approval: Approval.layerTest(options.answer ?? { answer: "deny", message: "no" }, options.asked ?? [])
    }).pipe(Layer.provideMerge(NodeServices.layer))
  )

export type CodeContext = Effect.Success<ReturnType<typeof codeSystem>>

let n = 0
/** Runs one `code` call through the system's Dispatcher (or the given profile's). */
export const runCode = (context: CodeContext, program: string, profile?: string): Effect.Effect<ToolResult> =>
  Effect.gen(function* () {
    const base = Context.get(context, Dispatcher)
    const dispatcher = profile === undefined ? base : yield* Effect.orDie(base.withProfile(profile))
    n += 1
    return yield* dispatcher.dispatch({ id: `prog${n}`, name: "code", args: { program } }, { sessionId: "s" })
  })

/** The full stored output of a call. */
export const stored = (context: CodeContext, id: string) =>
  Effect.map(Context.get(context, OutputStore).get("s", id), (o) => (o._tag === "Some" ? o.value.text : undefined))

/** Collects every event published while `effect` runs. */
export const withEvents = <A, E>(context: CodeContext, effect: Effect.Effect<A, E>) =>
  Effect.scoped(
    Effect.gen(function* () {
      const events: Array<ToolEvent> = []
      const stream = yield* Context.get(context, ToolEvents).subscribe
      const fiber = yield* Effect.forkScoped(Stream.runForEach(stream, (e) => Effect.sync(() => events.push(e))))
      const result = yield* effect
      yield* Effect.sleep("50 millis")
      yield* Fiber.interrupt(fiber)
      return { result, events }
    })
  )
