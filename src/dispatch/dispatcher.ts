/**
 * What a loop (and the CLI, and the MCP server) calls for each model tool call: the call path
 * (src/orchestrator/orchestrator.ts) with every gate — the permission engine under this
 * dispatcher's profiles, PreToolUse and PostToolUse hooks, and the system's Approval.
 * The decision and the hook outcomes go into the result's metadata (`permission`, `hooks`).
 */
import { Context, Effect, Layer } from "effect"
import type { ConfigError } from "../config/load.ts"
import { Hooks } from "../hooks/hooks.ts"
import { declaredConcurrencySafe, runInBatches } from "../orchestrator/batching.ts"
import {
  type CallContext,
  type Catalog,
  Orchestrator,
  type Route,
  registryCatalog
} from "../orchestrator/orchestrator.ts"
import { Approval } from "../permission/approval.ts"
import { PermissionEngine, type Policy } from "../permission/engine.ts"
import { ToolRegistry } from "../registry/registry.ts"
import type { ToolCall, ToolResult } from "../tool/result.ts"
import type { Tool } from "../tool/tool.ts"

export type { PermissionMetadata } from "../orchestrator/authorize.ts"

/**
 * The dispatcher the current call runs under. A narrowed dispatcher (withProfile) provides itself
 * around its calls, and the sub-agent runner provides each child's, so an `agent` call starts
 * its child from the rules it was made under; unset, the tool system's own Dispatcher is it.
 */
export const CurrentDispatcher = Context.Reference<DispatcherShape | undefined>("freecode/CurrentDispatcher", {
  defaultValue: () => undefined
})

export interface DispatcherShape {
  readonly dispatch: (call: ToolCall, context: CallContext) => Effect.Effect<ToolResult>
  /**
   * `dispatch`, with names resolved in `catalog` instead of the registry (a surface's, which
   * adds tool_search and tool_call): the same gates, the same path.
   */
  readonly dispatchIn: (catalog: Catalog, call: ToolCall, context: CallContext) => Effect.Effect<ToolResult>
  /** One model turn: the calls run in planned batches, results in call order. */
  readonly dispatchBatch: (
    calls: ReadonlyArray<ToolCall>,
    context: CallContext
  ) => Effect.Effect<ReadonlyArray<ToolResult>>
  /**
   * The dispatcher a sub-agent gets: this one's rules narrowed by a profile (a name from
   * freecode.json or a built-in — `read-only`, `plan` — or a compiled Policy). Never wider.
   */
  readonly withProfile: (profile: string | Policy) => Effect.Effect<DispatcherShape, ConfigError>
  /** The tools an agent under this dispatcher may use (the profiles' tool filters). */
  readonly tools: Effect.Effect<ReadonlyArray<Tool>>
  /** The profiles this dispatcher runs under, narrowing the project's policy (in order). */
  readonly chain: ReadonlyArray<Policy>
}

export class Dispatcher extends Context.Service<Dispatcher, DispatcherShape>()("freecode/Dispatcher") {
  static readonly layer = Layer.effect(
    Dispatcher,
    Effect.gen(function* () {
      const orchestrator = yield* Orchestrator
      const registry = yield* ToolRegistry
      const engine = yield* PermissionEngine
      const hooks = yield* Hooks
      const approval = yield* Approval
      const catalog = registryCatalog(registry)

      const make = (chain: ReadonlyArray<Policy>): DispatcherShape => {
        // One route per catalog (a surface's is made once), so the path's per-route state is reused.
        const routes = new WeakMap<Catalog, Route>()
        const route = (c: Catalog): Route => {
          const known = routes.get(c)
          if (known !== undefined) return known
          const made: Route = { catalog: c, engine, chain, hooks, approval }
          routes.set(c, made)
          return made
        }
        const own = route(catalog)
        const dispatch = (call: ToolCall, context: CallContext) => orchestrator.run(call, context, own)
        const dispatchBatch = (calls: ReadonlyArray<ToolCall>, context: CallContext) =>
          Effect.flatMap(registry.tools, (tools) =>
            runInBatches(calls, declaredConcurrencySafe(tools), (call) => dispatch(call, context))
          )

        // A narrowed dispatcher runs its calls as the CurrentDispatcher, so an `agent` call made
        // through it starts its child from these rules, never from the wider system's.
        const asCurrent = <A>(effect: Effect.Effect<A>): Effect.Effect<A> =>
          chain.length === 0 ? effect : Effect.provideService(effect, CurrentDispatcher, shape)
        const shape: DispatcherShape = {
          dispatch: (call, context) => asCurrent(dispatch(call, context)),
          dispatchIn: (c, call, context) => asCurrent(orchestrator.run(call, context, route(c))),
          dispatchBatch: (calls, context) => asCurrent(dispatchBatch(calls, context)),
          withProfile: (profile) =>
            Effect.map(typeof profile === "string" ? engine.profile(profile) : Effect.succeed(profile), (p) =>
              make([...chain, p])
            ),
          tools: Effect.map(registry.tools, (all) => all.filter((t) => chain.every((p) => p.tools(t)))),
          chain
        }
        return shape
      }

      return Dispatcher.of(make([]))
    })
  )
}
