/**
 * The registered tools, in a stable order: fixed (built-in) tools first, then tools that come
 * and go at runtime (MCP), each group by name. A stable order keeps the tools block inside
 * the provider's cached prompt prefix; putting the changing tools last means a server that
 * connects or disconnects only invalidates the end of it.
 */
import { Context, Effect, Layer, Option, PubSub, Schema, type Scope, Stream } from "effect"
import type { UnknownTool } from "../tool/errors.ts"
import type { Tool, ToolSource } from "../tool/tool.ts"
import { type Provider, type ToolDefinition, toolsParam } from "./provider.ts"
import { unknownTool } from "./suggest.ts"

export class DuplicateTool extends Schema.TaggedError<DuplicateTool>()("DuplicateTool", {
  id: Schema.String,
  message: Schema.String
}) {}

export interface RegistryChange {
  readonly type: "registered" | "unregistered"
  readonly id: string
  /** The registry's version after the change; definitions cached at an older version are stale. */
  readonly version: number
}

const SOURCE_RANK: Record<ToolSource, number> = { builtin: 0, extension: 1, mcp: 2 }

const byStableOrder = (a: Tool, b: Tool) =>
  SOURCE_RANK[a.source] - SOURCE_RANK[b.source] || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)

/**
 * Gives an effect the services of the context a tool was registered in, adding only those the
 * running fiber lacks or holds differently. A built-in tool runs in the same system it was
 * registered in, so usually nothing is added: Effect.provideContext would copy every service
 * into a new map on each call (and reset the fiber's reference cache) to change nothing.
 */
const providing = <R>(context: Context.Context<R>) => {
  const services = Array.from(context.mapUnsafe, ([key, value]) => ({
    key: Context.Service<R, unknown>(key),
    value
  }))
  // Contexts are immutable and a tool is usually called from the same one: remember the last.
  let lastIn: Context.Context<never> | undefined
  let lastOut: Context.Context<R> | undefined
  return <A, E>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E> =>
    Effect.updateContext(effect, (current: Context.Context<never>) => {
      if (current === lastIn) return lastOut!
      // Typed as holding R already: the loop below makes it so.
      let next = current as Context.Context<R>
      for (const { key, value } of services) {
        if (Context.getOrUndefined(next, key) !== value) next = Context.add(next, key, value)
      }
      lastIn = current
      lastOut = next
      return next
    })
}

/** Provides a tool's requirements once, at registration, so the registry holds runnable tools. */
const provideTool = <R>(tool: Tool<R>, context: Context.Context<R>): Tool => {
  const provide = providing(context)
  const provided: Tool = {
    ...tool,
    validateInput:
      tool.validateInput === undefined ? undefined : (args, ctx) => provide(tool.validateInput!(args, ctx)),
    checkPermissions:
      tool.checkPermissions === undefined ? undefined : (args, ctx) => provide(tool.checkPermissions!(args, ctx)),
    execute: (args, ctx) => provide(tool.execute(args, ctx))
  }
  // A description that follows the registry (`code`'s typed API of the tools it can reach) stays
  // a getter, read whenever it is declared; spreading would freeze it at registration.
  const description = Object.getOwnPropertyDescriptor(tool, "description")
  if (description?.get !== undefined) Object.defineProperty(provided, "description", description)
  return provided
}

export class ToolRegistry extends Context.Service<
  ToolRegistry,
  {
    /** Adds a tool; its requirements are taken from the caller's context now. */
    readonly register: <R>(tool: Tool<R>) => Effect.Effect<void, DuplicateTool, R>
    /** Adds a tool that is removed again when the current scope closes. */
    readonly registerScoped: <R>(tool: Tool<R>) => Effect.Effect<void, DuplicateTool, R | Scope.Scope>
    readonly unregister: (id: string) => Effect.Effect<boolean>
    /** Exact id only. */
    readonly get: (id: string) => Effect.Effect<Option.Option<Tool>>
    /** The name a model sent: exact, else a wrong-case name repaired, else UnknownTool with suggestions. */
    readonly resolve: (name: string) => Effect.Effect<Tool, UnknownTool>
    /**
     * `resolve` without the effect or the error: the tool, or undefined. For the per-call path,
     * where the answer is needed now and a miss is handled by calling `resolve` for its message.
     */
    readonly lookup: (name: string) => Tool | undefined
    readonly tools: Effect.Effect<ReadonlyArray<Tool>>
    /** `tools` now, without the effect: for the per-call path, like `lookup`. */
    readonly toolsNow: () => ReadonlyArray<Tool>
    readonly definitions: Effect.Effect<ReadonlyArray<ToolDefinition>>
    readonly toolsParam: (provider: Provider) => Effect.Effect<ReadonlyArray<unknown>>
    /**
     * Runs `effect` with the changes it makes announced as one, its last (an MCP server's whole
     * tool list swapped: a client re-lists once, not once per tool). Changes other fibers make
     * meanwhile are announced with it.
     */
    readonly batch: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
    /** Every change to the set, as it happens (subscribers see changes after they start). */
    readonly changes: Stream.Stream<RegistryChange>
  }
>()("freecode/ToolRegistry") {
  static readonly layer = Layer.effect(
    ToolRegistry,
    Effect.gen(function* () {
      const tools = new Map<string, Tool>()
      let version = 0
      let ordered: ReadonlyArray<Tool> | undefined
      let definitions: ReadonlyArray<ToolDefinition> | undefined
      const params = new Map<Provider, ReadonlyArray<unknown>>()
      const pubsub = yield* PubSub.unbounded<RegistryChange>()
      yield* Effect.addFinalizer(() => PubSub.shutdown(pubsub))

      // Inside a batch a change is held back, and the last one is announced when it ends.
      let batching = 0
      let held: RegistryChange | undefined

      // Every mutation goes through here: caches drop in the same step the change is announced.
      const changed = (type: RegistryChange["type"], id: string) => {
        version++
        ordered = undefined
        definitions = undefined
        params.clear()
        if (batching > 0) {
          held = { type, id, version }
          return Effect.void
        }
        return PubSub.publish(pubsub, { type, id, version }).pipe(Effect.asVoid)
      }

      const batch = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
        Effect.suspend(() => {
          batching++
          return Effect.ensuring(
            effect,
            Effect.suspend(() => {
              batching--
              if (batching > 0 || held === undefined) return Effect.void
              const change = held
              held = undefined
              return PubSub.publish(pubsub, change).pipe(Effect.asVoid)
            })
          )
        })

      const orderedTools = () => (ordered ??= [...tools.values()].sort(byStableOrder))

      const register = <R>(tool: Tool<R>): Effect.Effect<void, DuplicateTool, R> =>
        Effect.gen(function* () {
          if (tools.has(tool.id)) {
            return yield* new DuplicateTool({ id: tool.id, message: `a tool named ${tool.id} is already registered` })
          }
          const context = yield* Effect.context<R>()
          tools.set(tool.id, provideTool(tool, context))
          yield* changed("registered", tool.id)
        })

      const unregister = (id: string) =>
        Effect.suspend(() => (tools.delete(id) ? Effect.as(changed("unregistered", id), true) : Effect.succeed(false)))

      const lookup = (name: string): Tool | undefined => {
        const exact = tools.get(name)
        if (exact !== undefined) return exact
        const folded = orderedTools().filter((t) => t.id.toLowerCase() === name.toLowerCase())
        return folded.length === 1 ? folded[0] : undefined
      }

      const resolve = (name: string): Effect.Effect<Tool, UnknownTool> =>
        Effect.suspend(() => {
          const found = lookup(name)
          if (found !== undefined) return Effect.succeed(found)
          return Effect.fail(
            unknownTool(
              name,
              orderedTools().map((t) => t.id)
            )
          )
        })

      const defs = () =>
        (definitions ??= orderedTools().map((t) => ({
          name: t.id,
          description: t.description,
          inputSchema: t.inputSchema
        })))

      return ToolRegistry.of({
        register,
        registerScoped: (tool) =>
          Effect.flatMap(register(tool), () => Effect.addFinalizer(() => Effect.asVoid(unregister(tool.id)))),
        unregister,
        get: (id) => Effect.sync(() => Option.fromNullishOr(tools.get(id))),
        resolve,
        lookup,
        tools: Effect.sync(orderedTools),
        toolsNow: orderedTools,
        definitions: Effect.sync(defs),
        toolsParam: (provider) =>
          Effect.sync(() => {
            const cached = params.get(provider)
            if (cached !== undefined) return cached
            const built = toolsParam(provider, defs())
            params.set(provider, built)
            return built
          }),
        batch,
        changes: Stream.fromPubSub(pubsub)
      })
    })
  )
}
