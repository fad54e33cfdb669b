/**
 * What a loop (and the CLI, and the MCP server) calls for each model tool call: the one door
 * (`CallPath`, src/orchestrator/call-path.ts) built on the gated route — the permission engine
 * under this dispatcher's profiles, PreToolUse and PostToolUse hooks, and the system's Approval,
 * taken from context once, when the layer is built (a narrowed dispatcher builds its own door
 * once). A thin facade: it adds the profiles' narrowing.
 * The decision and the hook outcomes go into the result's metadata (`permission`, `hooks`).
 */
import { Context, Effect, Layer } from "effect"
import type { ConfigError } from "../config/load.ts"
import { CallPath, type Door } from "../orchestrator/call-path.ts"
import type { CallContext } from "../orchestrator/context.ts"
import type { Catalog } from "../orchestrator/prepare.ts"
import { Route } from "../orchestrator/route.ts"
import type { Policy } from "../permission/engine.ts"
import { ToolRegistry } from "../registry/registry.ts"
import { describedFor } from "../tool/reach.ts"
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
      const path = yield* CallPath
      const registry = yield* ToolRegistry
      const gated = yield* Route
      const { engine } = gated

      // The door for this chain, built once: its calls find their gates in it.
      const make = (chain: ReadonlyArray<Policy>): Effect.Effect<DispatcherShape> =>
        Effect.map(Effect.provideService(path.door, Route, { ...gated, chain }), (door) => shapeOf(chain, door))

      const shapeOf = (chain: ReadonlyArray<Policy>, door: Door): DispatcherShape => {
        // The tools under this chain, each described for what the chain reaches (made once per
        // registry list: the list is a new array after every change).
        let listed: readonly [ReadonlyArray<Tool>, ReadonlyArray<Tool>] | undefined
        const toolsFor = (all: ReadonlyArray<Tool>): ReadonlyArray<Tool> => {
          if (listed?.[0] === all) return listed[1]
          const mine = all.filter((t) => chain.every((p) => p.tools(t)))
          const reach = mine.filter((t) => engine.alwaysRefused(t, chain) === undefined)
          listed = [all, describedFor(mine, reach)]
          return listed[1]
        }

        // A narrowed dispatcher runs its calls as the CurrentDispatcher, so an `agent` call made
        // through it starts its child from these rules, never from the wider system's; the
        // system's own is the default, and its calls go straight through its door.
        const asCurrent = <A>(effect: Effect.Effect<A>): Effect.Effect<A> =>
          Effect.provideService(effect, CurrentDispatcher, shape)
        const shape: DispatcherShape = {
          dispatch: chain.length === 0 ? door.run : (call, context) => asCurrent(door.run(call, context)),
          dispatchIn: chain.length === 0 ? door.runIn : (c, call, context) => asCurrent(door.runIn(c, call, context)),
          dispatchBatch:
            chain.length === 0 ? door.runBatch : (calls, context) => asCurrent(door.runBatch(calls, context)),
          withProfile: (profile) =>
            Effect.flatMap(typeof profile === "string" ? engine.profile(profile) : Effect.succeed(profile), (p) =>
              make([...chain, p])
            ),
          tools: Effect.map(registry.tools, toolsFor),
          chain
        }
        return shape
      }

      return Dispatcher.of(yield* make([]))
    })
  ).pipe(Layer.provide(Route.gated))
}
