/**
 * Held calls on two servers sharing a key and a record of used states (as replicas on one
 * store): a retry reaching the server that does not hold the call runs it there from the start
 * only when its tool had not started, the answer going to the same question; a different
 * question is asked anew; a call whose tool started is never run again there.
 */
import { randomBytes } from "node:crypto"
import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { type HeldCalls, type HeldOutcome, makeHeldCalls, type RequestIo } from "../../src/mcp/held-calls.ts"
import { makeRequestStates, memoryNonceStore, type NonceStore } from "../../src/mcp/request-state.ts"
import type { ElicitationForm, InputRoundShape } from "../../src/prompt/input-round.ts"

const form = (message: string): ElicitationForm => ({
  mode: "form",
  message,
  requestedSchema: { type: "object", properties: { q1: { type: "string" } } }
})
const io: RequestIo = { onOutput: () => undefined, canElicit: true, signal: new AbortController().signal }
const binding = { tool: "deploy", args: { to: "prod" }, client: "local\u0000test@1" }
const yes = (key: string) => ({ [key]: { action: "accept", content: { q1: "yes" } } })

/** Two servers with one key and one record of used states, seen by both (a store). */
const pair = () => {
  const key = randomBytes(32)
  const memory = memoryNonceStore()
  const shared: NonceStore = { shared: true, claim: memory.claim }
  const states = makeRequestStates(key, shared)
  return [makeHeldCalls<string>(states, 60_000), makeHeldCalls<string>(states, 60_000)] as const
}

/** A call that asks `asks` (in order), counting each run; `started` first when it has started its tool. */
const call =
  (runs: { n: number }, asks: ReadonlyArray<string>, startsFirst = false) =>
  (round: InputRoundShape) =>
    Effect.gen(function* () {
      runs.n++
      if (startsFirst && round.started !== undefined) yield* round.started
      const answers: Array<string> = []
      for (const message of asks) {
        const got = yield* round.elicit(form(message))
        answers.push(got._tag === "Answer" ? `${message}=${got.answer.action}` : `${message}:unavailable`)
      }
      return answers.join(",")
    })

const asked = (outcome: HeldOutcome<string>) => {
  if (outcome._tag !== "InputRequired") throw new Error(`not input_required: ${JSON.stringify(outcome)}`)
  return { key: Object.keys(outcome.inputRequests)[0]!, state: outcome.requestState }
}

const resume = (on: HeldCalls<string>, q: { key: string; state: string }, run: ReturnType<typeof call>) =>
  on.resume(binding, q.state, yes(q.key), io, run)

describe("held calls across servers", () => {
  it("a call that had not started runs again on the other server with the answer, once", async () => {
    const [a, b] = pair()
    const onA = { n: 0 }
    const onB = { n: 0 }
    await Effect.runPromise(
      Effect.gen(function* () {
        const first = asked(yield* a.start(binding, io, call(onA, ["approve"])))
        const done = yield* resume(b, first, call(onB, ["approve"]))
        expect(done).toEqual({ _tag: "Result", result: "approve=accept" })
        expect(onB.n).toBe(1)
        // Used up everywhere: neither server takes it again, and nothing runs.
        for (const server of [a, b]) {
          const again = yield* resume(server, first, call(onB, ["approve"]))
          expect(again).toMatchObject({ _tag: "Refused", problem: "replayed" })
        }
        expect(onB.n).toBe(1)
      }).pipe(Effect.ensuring(Effect.andThen(a.close, b.close)))
    )
  })

  it("answers given before carry over, and a question that changed is asked anew", async () => {
    const [a, b] = pair()
    const runs = { n: 0 }
    await Effect.runPromise(
      Effect.gen(function* () {
        const first = asked(yield* a.start(binding, io, call(runs, ["hook asks", "approve"])))
        const second = asked(yield* resume(a, first, call(runs, ["hook asks", "approve"])))
        // On B both questions are answered without asking: the first from the state, the second from the retry.
        const done = yield* resume(b, second, call(runs, ["hook asks", "approve"]))
        expect(done).toEqual({ _tag: "Result", result: "hook asks=accept,approve=accept" })
        // A state whose question is not the one the call asks on the other server: asked anew there.
        const third = asked(yield* a.start(binding, io, call(runs, ["approve"])))
        const anew = yield* resume(b, third, call(runs, ["a different question"]))
        expect(anew._tag).toBe("InputRequired")
      }).pipe(Effect.ensuring(Effect.andThen(a.close, b.close)))
    )
  })

  it("a call whose tool started is not run again on the other server", async () => {
    const [a, b] = pair()
    const onA = { n: 0 }
    const onB = { n: 0 }
    await Effect.runPromise(
      Effect.gen(function* () {
        const first = asked(yield* a.start(binding, io, call(onA, ["nested approval"], true)))
        // No way to hand it over here (no store): refused, and B runs nothing.
        const refused = yield* resume(b, first, call(onB, ["nested approval"], true))
        expect(refused).toMatchObject({ _tag: "Refused", problem: "not-held" })
        expect(onB.n).toBe(0)
        expect(onA.n).toBe(1)
      }).pipe(Effect.ensuring(Effect.andThen(a.close, b.close)))
    )
  })
})
