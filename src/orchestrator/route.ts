/**
 * A Route: where a door's calls resolve (a Catalog) and the gates they pass (the permission
 * engine under a chain of profiles, the hooks, the Approval). It is a service because a door
 * takes it from context once, when the door is built (`CallPath.door`): the Orchestrator's layer
 * builds its door on `Route.ungated`, the Dispatcher's on `Route.gated`, and a narrowed
 * dispatcher on its own chain. A call finds its gates in the door it came through, so nothing
 * is provided per call (tried: a route provided in context per call cost the ungated no-op call
 * 29% more CPU in bench/cold-ab.ts).
 */
import { Context, Effect, Layer } from "effect"
import { Hooks, hooksOf } from "../hooks/hooks.ts"
import { allowAllEngine } from "../permission/allow-all.ts"
import { Approval } from "../permission/approval.ts"
import { PermissionEngine, type PermissionEngineShape, type Policy } from "../permission/engine.ts"
import type { ToolRegistry } from "../registry/registry.ts"
import { nobodyToAsk } from "./authorize.ts"
import type { Catalog } from "./prepare.ts"

export interface RouteShape {
  /** Where names resolve; unset, the registry. */
  readonly catalog?: Catalog
  readonly engine: PermissionEngineShape
  /** The profiles the calls run under, narrowing the project's policy (in order). */
  readonly chain: ReadonlyArray<Policy>
  readonly hooks: Hooks["Service"]
  /** Asked when the caller brings no approver (`context.approve`). */
  readonly approval: Approval["Service"]
}

export class Route extends Context.Service<Route, RouteShape>()("freecode/Route") {
  /**
   * The registry with the tool's own checks alone: the allow-all engine, no hooks (a real Hooks
   * value with none configured), nobody to ask.
   */
  static readonly ungated = Layer.succeed(Route, {
    engine: allowAllEngine,
    chain: [],
    hooks: hooksOf([]),
    approval: nobodyToAsk
  })

  /** The registry behind every gate of the system: its PermissionEngine, Hooks and Approval. */
  static readonly gated = Layer.effect(
    Route,
    Effect.gen(function* () {
      return { engine: yield* PermissionEngine, chain: [], hooks: yield* Hooks, approval: yield* Approval }
    })
  )
}

/** The registry as a catalog: exact ids, wrong-case names repaired, no strict-null reading. */
export const registryCatalog = (registry: ToolRegistry["Service"]): Catalog => ({
  find: (name) => registry.lookup(name),
  names: () => registry.toolsNow().map((t) => t.id),
  strictNulls: false
})
