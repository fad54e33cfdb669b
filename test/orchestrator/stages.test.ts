/** Each stage after authorize, on its own: attempt, record, shape, build, publish. */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Fiber, Result, Stream } from "effect"
import { TestClock } from "effect/testing"
import { type ToolEvent, ToolEvents } from "../../src/events/events.ts"
import type { Hooks } from "../../src/hooks/hooks.ts"
import { attempt, MAX_ATTEMPTS } from "../../src/orchestrator/attempt.ts"
import { liveOutput } from "../../src/orchestrator/live.ts"
import { afterHooks, argsForEvent, publishResult } from "../../src/orchestrator/publish.ts"
import { type Recorded, record } from "../../src/orchestrator/record.ts"
import { buildResult } from "../../src/orchestrator/result.ts"
import { shapeOutput } from "../../src/orchestrator/shape.ts"
import { makeMemoryStore, type PutRequest } from "../../src/output/store.ts"
import { makeSessions } from "../../src/session/sessions.ts"
import { fail, PermissionDenied, ToolTimeout } from "../../src/tool/errors.ts"
import type { ToolResult } from "../../src/tool/result.ts"
import type { Tool, ToolContext } from "../../src/tool/tool.ts"
import { flaky, hang, Lines } from "./fixtures.ts"

const ctx: ToolContext = { sessionId: "s", callId: "c", root: "/", canSeeImages: false, emit: () => Effect.void }

const store = () => {
  const puts: Array<PutRequest> = []
  const inner = makeMemoryStore(1_000_000, makeSessions({ maxSessions: 4 }), { keepChars: 100_000 })
  return {
    puts,
    store: {
      ...inner,
      put: (r: PutRequest) =>
        Effect.andThen(
          Effect.sync(() => puts.push(r)),
          inner.put(r)
        )
    }
  }
}

const live = () => {
  const s = store().store
  return liveOutput({
    open: () => s.open({ sessionId: "s", id: "c", tool: "t" }),
    openCapture: () => s.capture({ sessionId: "s", id: "c", tool: "t" }, () => Effect.void),
    show: () => Effect.void
  })
}

const text = (t: string, stored = true): Recorded => ({
  stored: stored ? { stored: true } : { stored: false, reason: "empty" },
  view: { kind: "text", text: t },
  lines: t === "" ? 0 : t.split("\n").length
})

describe("attempt", () => {
  it.effect("a retrySafe tool gets one more attempt after a transient failure, and the result counts them", () =>
    Effect.gen(function* () {
      const { tool } = flaky("f", true, 1)
      const context = { sessionId: "s" }
      const fiber = yield* Effect.forkChild(attempt(context, live(), tool, {}, ctx))
      yield* TestClock.adjust("1 second")
      const out = yield* Fiber.join(fiber)
      expect(Result.isSuccess(out.outcome) && out.outcome.success.output).toBe("ok on run 2")
      expect(out.attempts).toBe(MAX_ATTEMPTS)
      const once = flaky("g", false, 1)
      const failed = yield* attempt(context, live(), once.tool, {}, ctx)
      expect(Result.isFailure(failed.outcome) && failed.outcome.failure._tag).toBe("TransientFailure")
      expect(failed.attempts).toBe(1)
    })
  )

  it.effect("a tool past its timeout fails with ToolTimeout; one that throws is a ToolFailure", () =>
    Effect.gen(function* () {
      const slow = hang("slow", "block", "1 second")
      const context = { sessionId: "s" }
      const fiber = yield* Effect.forkChild(attempt(context, live(), slow, {}, ctx))
      yield* TestClock.adjust("2 seconds")
      const timed = (yield* Fiber.join(fiber)).outcome
      expect(Result.isFailure(timed) && timed.failure._tag).toBe("ToolTimeout")
      const throws: Tool = { ...Lines, execute: () => Effect.die(new Error("kaput")) }
      const broke = (yield* attempt(context, live(), throws, { lines: 1 }, ctx)).outcome
      expect(Result.isFailure(broke) && broke.failure).toMatchObject({ _tag: "ToolFailure" })
      expect(Result.isFailure(broke) && broke.failure.message).toContain("kaput")
    })
  )
})

describe("record", () => {
  it.effect("puts the whole output before anything is cut; an empty one is not stored", () =>
    Effect.gen(function* () {
      const s = store()
      const full = Array.from({ length: 5000 }, (_, i) => `line ${i}`).join("\n")
      const rec = { sessionId: "s", callId: "c1", tool: "lines", live: live() }
      const got = yield* record(s.store, rec, Result.succeed({ title: "t", output: full }))
      expect(s.puts.map((p) => p.text)).toEqual([full])
      expect(got).toMatchObject({ stored: { stored: true }, lines: 5000, view: { kind: "text", text: full } })
      const empty = yield* record(s.store, { ...rec, callId: "c2" }, Result.succeed({ title: "t", output: "" }))
      expect(empty.stored).toEqual({ stored: false, reason: "empty" })
      expect(s.puts.length).toBe(1)
    })
  )

  it.effect("a timeout's partial output (what the tool emitted) is what gets stored", () =>
    Effect.gen(function* () {
      const s = store()
      const emitted = live()
      yield* emitted.add("so far")
      const error = new ToolTimeout({ tool: "t", timeoutMs: 1, partialOutput: emitted.text(), message: "timed out" })
      const got = yield* record(s.store, { sessionId: "s", callId: "c", tool: "t", live: emitted }, Result.fail(error))
      expect(s.puts.map((p) => p.text)).toEqual(["so far"])
      expect(got.view).toEqual({ kind: "text", text: "so far" })
    })
  )
})

describe("shape", () => {
  it.effect("cuts the model's copy to the tool's budget with a marker that names the retrieval call", () =>
    Effect.gen(function* () {
      const full = Array.from({ length: 5000 }, (_, i) => `line ${i}`).join("\n")
      const settings = {
        maxChars: 2000,
        maxLines: 100,
        uiMaxChars: 500,
        compress: false,
        store: store().store,
        fs: undefined as never
      }
      const shaped = yield* shapeOutput(
        settings,
        { sessionId: "s", callId: "c9", tool: Lines, outputKind: undefined, failed: false },
        text(full)
      )
      expect(shaped.truncated).toBe(true)
      expect(shaped.modelOutput.length).toBeLessThanOrEqual(2200)
      expect(shaped.modelOutput).toContain('output {"id": "c9"')
      expect(shaped.uiOutput.length).toBeLessThanOrEqual(500)
      const small = { ...Lines, maxResultSizeChars: 100 }
      const tighter = yield* shapeOutput(
        settings,
        { sessionId: "s", callId: "c9", tool: small, outputKind: undefined, failed: false },
        text(full)
      )
      expect(tighter.modelOutput.length).toBeLessThan(shaped.modelOutput.length)
    })
  )
})

describe("build", () => {
  it("one builder: status by error, the message before any output, metadata merged", () => {
    const ok = buildResult({
      callId: "c",
      tool: "t",
      outcome: Result.succeed({ title: "T", output: "out", metadata: { own: 1 } }),
      recorded: text("out"),
      shaped: { modelOutput: "out", uiOutput: "out", truncated: false },
      metadata: { via: "tool_call" },
      attempts: 1,
      durationMs: 3
    })
    expect(ok).toEqual({
      id: "c",
      tool: "t",
      status: "ok",
      title: "T",
      modelOutput: "out",
      uiOutput: "out",
      outputId: "c",
      outputChars: 3,
      outputLines: 1,
      truncated: false,
      metadata: { own: 1, via: "tool_call" },
      attempts: 1,
      durationMs: 3
    })
    const denied = buildResult({
      callId: "c",
      tool: "t",
      outcome: Result.fail(new PermissionDenied({ tool: "t", message: "no." })),
      recorded: text("", false),
      shaped: { modelOutput: "", uiOutput: "", truncated: false },
      metadata: {},
      attempts: 0,
      durationMs: 0
    })
    expect(denied).toMatchObject({
      status: "denied",
      modelOutput: "no.",
      title: "t: PermissionDenied",
      error: { tag: "PermissionDenied" }
    })
    expect(denied.outputId).toBeUndefined()
    const partial = buildResult({
      callId: "c",
      tool: "t",
      outcome: Result.fail(fail("broke", { code: 2 })),
      recorded: text("half"),
      shaped: { modelOutput: "half", uiOutput: "half", truncated: false },
      metadata: {},
      attempts: 1,
      durationMs: 0
    })
    expect(partial).toMatchObject({ status: "error", modelOutput: "broke\nhalf", metadata: { code: 2 } })
  })
})

describe("publish", () => {
  const result: ToolResult = buildResult({
    callId: "c",
    tool: "t",
    outcome: Result.succeed({ title: "T", output: "x".repeat(5000) }),
    recorded: text("x".repeat(5000)),
    shaped: { modelOutput: "x".repeat(5000), uiOutput: "x".repeat(300), truncated: false },
    metadata: {},
    attempts: 1,
    durationMs: 0
  })

  it.effect("PostToolUse feedback and PreToolUse context join the model's copy; outcomes join the metadata", () =>
    Effect.gen(function* () {
      const hooks = {
        has: () => true,
        post: () =>
          Effect.succeed({
            feedback: ["lint it"],
            outcomes: [{ event: "PostToolUse", hook: "h", outcome: "continue", durationMs: 0 }]
          })
      } as unknown as Hooks["Service"]
      const out = yield* afterHooks({ hooks, root: "/", input: {}, notes: ["note"], outcomes: [] }, "s", {
        ...result,
        modelOutput: "out"
      })
      expect(out.texts).toEqual(["note", "lint it"])
      expect(out.outcomes.length).toBe(1)
      const none = yield* afterHooks({ hooks: undefined, root: "/", input: {}, notes: [], outcomes: [] }, "s", result)
      expect(none).toEqual({ texts: [], outcomes: [] })
    })
  )

  it.effect("the final events: UI windows, then a complete event capped at the UI limit", () =>
    Effect.gen(function* () {
      const events = yield* ToolEvents
      const seen: Array<ToolEvent> = []
      const fiber = yield* Effect.forkChild(
        Stream.runForEach(yield* events.subscribe, (e) => Effect.sync(() => seen.push(e)))
      )
      yield* publishResult(
        { events, windowSize: 100, uiMaxChars: 1000 },
        { sessionId: "s", callId: "c", tool: "t" },
        result
      )
      yield* Effect.yieldNow
      yield* Fiber.interrupt(fiber)
      expect(seen.map((e) => e.type)).toEqual(["tool_output", "tool_output", "tool_output", "tool_complete"])
      const complete = seen.at(-1)!
      expect(complete.type === "tool_complete" && complete.result.modelOutput.length).toBe(1000)
    }).pipe(Effect.provide(ToolEvents.layer))
  )

  it("arguments in tool_start are whole when small, a preview when large, and never throw", () => {
    expect(argsForEvent({ a: 1 }, 100)).toEqual({ a: 1 })
    expect(argsForEvent({ a: "x".repeat(500) }, 100)).toMatchObject({ truncated: true })
    let deep: unknown = 1
    for (let i = 0; i < 100_000; i++) deep = { a: deep }
    expect(argsForEvent(deep, 100)).toMatchObject({ truncated: true })
  })
})
