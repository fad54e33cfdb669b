/**
 * The order of a program's calls (src/code/order.ts): safe calls run beside each other, a
 * mutating call waits for every earlier call and holds back every later one. Proved with latches,
 * not clocks: a safe call that waits for its neighbour would hang if they were not concurrent.
 */
import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Fiber } from "effect"
import { makeCallOrder } from "../../src/code/order.ts"

describe("call order", () => {
  it.live(
    "two safe calls overlap; a mutating call runs after both and before the safe call made after it",
    () =>
      Effect.gen(function* () {
        const order = makeCallOrder()
        const log: Array<string> = []
        const aStarted = yield* Deferred.make<void>()
        const bStarted = yield* Deferred.make<void>()
        const step = (name: string, body: Effect.Effect<void> = Effect.void) =>
          Effect.gen(function* () {
            log.push(`${name} start`)
            yield* body
            log.push(`${name} end`)
          })
        // Placed in program order, at once, as the bridge does.
        const a = order.place(
          true,
          step("a", Effect.andThen(Deferred.succeed(aStarted, undefined), Deferred.await(bStarted)))
        )
        const b = order.place(
          true,
          step("b", Effect.andThen(Deferred.succeed(bStarted, undefined), Deferred.await(aStarted)))
        )
        const c = order.place(false, step("c"))
        const d = order.place(true, step("d"))
        const fibers = yield* Effect.forEach([d, c, b, a], (e) => Effect.forkChild(e))
        yield* Effect.forEach(fibers, Fiber.join)
        // a and b both started before either ended (else they would wait for each other for ever).
        expect(log.indexOf("a start")).toBeLessThan(log.indexOf("b end"))
        expect(log.indexOf("b start")).toBeLessThan(log.indexOf("a end"))
        // c after both; d after c.
        expect(log.indexOf("c start")).toBeGreaterThan(Math.max(log.indexOf("a end"), log.indexOf("b end")))
        expect(log.indexOf("d start")).toBeGreaterThan(log.indexOf("c end"))
      }),
    20_000
  )
})
