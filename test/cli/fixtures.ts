/** Small tools for in-process CLI tests: each makes one CLI rule observable. */
import { Deferred, Effect, Schema } from "effect"
import { defineTool } from "../../src/tool/tool.ts"

export const Echo = defineTool({
  id: "echo",
  description: "Echo text back. Second sentence.",
  parameters: Schema.Struct({ text: Schema.String.annotate({ description: "What to echo." }) }),
  concurrencySafe: true,
  execute: ({ text }) => Effect.succeed({ title: "echo", output: text })
})

/** Prints what the call context says about the call. */
export const Whoami = defineTool({
  id: "whoami",
  description: "Report the session, the image capability and the root.",
  parameters: Schema.Struct({}),
  execute: (_, ctx) =>
    Effect.succeed({ title: "whoami", output: `session=${ctx.sessionId} images=${ctx.canSeeImages} root=${ctx.root}` })
})

/** Asks for approval on every call. */
export const Guarded = defineTool({
  id: "guarded",
  description: "Asks before it runs.",
  parameters: Schema.Struct({}),
  mutates: true,
  permissions: { operations: ["file.write"], requiresApproval: true },
  execute: () => Effect.succeed({ title: "guarded", output: "did the guarded thing" })
})

/** Emits partial output, tells the test it has started, then waits until cancelled. */
export const slow = (started: Deferred.Deferred<void>) =>
  defineTool({
    id: "slow",
    description: "Prints, then waits for a cancel.",
    parameters: Schema.Struct({}),
    interruptBehavior: "cancel",
    timeout: "1 minute",
    execute: (_, ctx) =>
      Effect.gen(function* () {
        yield* ctx.emit("partial line 1\n")
        yield* Deferred.succeed(started, undefined)
        return yield* Effect.never
      })
  })
