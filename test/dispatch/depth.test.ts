/**
 * Arguments nested far too deep come back as InvalidArguments through the whole path (surface,
 * Dispatcher, events), with the process alive: once, a recursive null check in the surface
 * overflowed the stack and took the server down.
 */
import { describe, expect, it } from "@effect/vitest"
import { Context, Effect, Fiber, Layer, Stream } from "effect"
import { type ToolEvent, ToolEvents } from "../../src/events/events.ts"
import { MAX_ARGUMENT_DEPTH } from "../../src/orchestrator/prepare.ts"
import { surfaceIn } from "../../src/surface/surface.ts"
import { makeRoot, system } from "./helpers.ts"

const deep = (depth: number, leaf: unknown): unknown => {
  let v = leaf
  for (let i = 0; i < depth; i++) v = { a: v }
  return v
}

describe("argument depth", () => {
  it.live("5,000 levels (with a strict-mode null at the bottom) is InvalidArguments, events and all", () => {
    const { root, cleanup } = makeRoot()
    return Effect.gen(function* () {
      const context = yield* Layer.build(system({ root }))
      const events = Context.get(context, ToolEvents)
      const seen: Array<ToolEvent> = []
      const fiber = yield* Effect.forkChild(
        Stream.runForEach(yield* events.subscribe, (e) => Effect.sync(() => seen.push(e)))
      )
      for (const options of [{ surface: "all" as const }, { surface: "deferred" as const }]) {
        const surface = surfaceIn(context, options)
        const direct = yield* surface.dispatch(
          { id: "d1", name: "look", args: { n: 1, more: deep(5000, null) } },
          { sessionId: "s" }
        )
        expect(direct).toMatchObject({ tool: "look", status: "error", error: { tag: "InvalidArguments" } })
        expect(direct.modelOutput).toContain(`deeper than ${MAX_ARGUMENT_DEPTH} levels`)
      }
      const bridged = yield* surfaceIn(context, { surface: "deferred" }).dispatch(
        { id: "d2", name: "tool_call", args: { name: "look", arguments: { n: deep(5000, 1) } } },
        { sessionId: "s" }
      )
      // The bound holds for what was sent: the bridge's own arguments are too deep.
      expect(bridged).toMatchObject({ tool: "tool_call", status: "error", error: { tag: "InvalidArguments" } })
      yield* Effect.yieldNow
      yield* Fiber.interrupt(fiber)
      expect(seen.filter((e) => e.type === "tool_complete").length).toBe(3)
    }).pipe(Effect.scoped, Effect.ensuring(Effect.sync(cleanup)))
  })
})
