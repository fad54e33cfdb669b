/** The terminal Approval, driven by key presses through a scripted Terminal (effect/cli prompts). */
import { NodeServices } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { type Cause, Effect, Layer, Option, Queue, Terminal } from "effect"
import { Approval, type ApprovalQuestion } from "../../src/permission/approval.ts"

const key = (name: string, input?: string): Terminal.UserInput => ({
  input: Option.fromNullishOr(input),
  key: { name, ctrl: false, meta: false, shift: false }
})
const typed = (text: string) => [...text].map((c) => key(c, c))

/** A terminal whose input is `keys`, in order, and whose output is collected. */
const scripted = (keys: ReadonlyArray<Terminal.UserInput>, shown: Array<string>) =>
  Layer.effect(
    Terminal.Terminal,
    Effect.gen(function* () {
      const queue = yield* Queue.unbounded<Terminal.UserInput, Cause.Done>()
      yield* Queue.offerAll(queue, keys)
      return Terminal.make({
        columns: Effect.succeed(120),
        rows: Effect.succeed(40),
        size: Effect.gen(function* () {
          const q = yield* Queue.unbounded<Terminal.Size, Cause.Done>()
          yield* Queue.offer(q, { columns: 120, rows: 40 })
          return q
        }),
        readInput: Effect.succeed(queue),
        readLine: Effect.succeed(""),
        display: (text) => Effect.sync(() => void shown.push(text))
      })
    })
  )

const question: ApprovalQuestion = {
  sessionId: "s",
  callId: "c",
  tool: "bash",
  args: { command: "npm test" },
  reason: "No allow rule covers `npm test`.",
  always: "bash(npm test)"
}

const answer = (keys: ReadonlyArray<Terminal.UserInput>, q: ApprovalQuestion = question) => {
  const shown: Array<string> = []
  return Effect.gen(function* () {
    const approval = yield* Approval
    return { answer: yield* approval.ask(q), shown: shown.join("") }
  }).pipe(
    Effect.provide(Approval.layerTerminal.pipe(Layer.provide(scripted(keys, shown)), Layer.provide(NodeServices.layer)))
  )
}

describe("Approval.layerTerminal", () => {
  it.live("enter on the first choice approves once; the question shows the call and the reason", () =>
    Effect.gen(function* () {
      const r = yield* answer([key("enter")])
      expect(r.answer).toEqual({ answer: "once" })
      expect(r.shown).toContain('bash {"command":"npm test"}')
      expect(r.shown).toContain("No allow rule covers `npm test`.")
      expect(r.shown).toContain("always allow bash(npm test) in this session")
    })
  )

  it.live("the second choice is 'always'", () =>
    Effect.gen(function* () {
      expect((yield* answer([key("down"), key("enter")])).answer).toEqual({ answer: "always" })
    })
  )

  it.live("no, with a message for the model", () =>
    Effect.gen(function* () {
      const r = yield* answer([key("down"), key("down"), key("enter"), ...typed("use make test"), key("enter")])
      expect(r.answer).toEqual({ answer: "deny", message: "use make test" })
    })
  )

  it.live("without an 'always' rule there are two choices; the second is no", () =>
    Effect.gen(function* () {
      const { always: _, ...noAlways } = question
      const r = yield* answer([key("down"), key("enter"), key("enter")], noAlways)
      expect(r.answer).toEqual({ answer: "deny" })
      expect(r.shown).not.toContain("always allow")
    })
  )
})
