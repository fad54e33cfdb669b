import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Fiber, Stream } from "effect"
import { TestClock } from "effect/testing"
import { testToolSystem } from "../../layers/test.ts"
import { EVENT_WINDOW_CHARS, type ToolEvent, ToolEvents } from "../../src/events/events.ts"
import { Orchestrator } from "../../src/orchestrator/orchestrator.ts"
import type { OutputSettings } from "../../src/output/config.ts"
import type { Tool } from "../../src/tool/tool.ts"
import type { BuiltinRequirements } from "../../src/tools/index.ts"
import { OutputTool } from "../../src/tools/output.ts"
import {
  BadPaths,
  BadValidate,
  Boom,
  Echo,
  flaky,
  Guarded,
  hang,
  LateBoom,
  Lines,
  makeLatchTools,
  Picture,
  Small
} from "./fixtures.ts"

const system = (tools: ReadonlyArray<Tool<BuiltinRequirements>>, output: Partial<OutputSettings> = {}) =>
  testToolSystem({ root: process.cwd(), tools: [...tools, OutputTool], output })

const run = (name: string, args: unknown, id = "c1") =>
  Orchestrator.use((o) => o.execute({ id, name, args }, { sessionId: "s" }))

describe("Orchestrator.execute", () => {
  it.effect("runs a tool and shapes an ok result", () =>
    Effect.gen(function* () {
      const result = yield* run("echo", { text: "hi", times: 2 })
      expect(result).toMatchObject({
        id: "c1",
        tool: "echo",
        status: "ok",
        title: "echo",
        modelOutput: "hihi",
        uiOutput: "hihi",
        outputId: "c1",
        outputChars: 4,
        outputLines: 1,
        truncated: false,
        metadata: { times: 2 },
        attempts: 1
      })
      expect(result.error).toBeUndefined()
    }).pipe(Effect.provide(system([Echo])))
  )

  it.effect("an unknown tool is a result naming the closest tools, not a failure of the Effect", () =>
    Effect.gen(function* () {
      const result = yield* run("ehco", { text: "x" })
      expect(result.status).toBe("error")
      expect(result.error?.tag).toBe("UnknownTool")
      expect(result.modelOutput).toBe('No tool named "ehco". Did you mean "echo"?')
    }).pipe(Effect.provide(system([Echo])))
  )

  it.effect("repairs a wrong-case tool name", () =>
    Effect.gen(function* () {
      const result = yield* run("ECHO", { text: "x" })
      expect(result).toMatchObject({ status: "ok", tool: "echo", modelOutput: "x" })
    }).pipe(Effect.provide(system([Echo])))
  )

  it.effect("bad arguments come back as one result listing every failing path", () =>
    Effect.gen(function* () {
      const result = yield* run("echo", { times: "many", loud: 1, txt: "hi" })
      expect(result.status).toBe("error")
      expect(result.error?.tag).toBe("InvalidArguments")
      expect(result.modelOutput.split("\n")).toEqual([
        "Invalid arguments for echo. Fix every item below and call again:",
        "- txt: Expected no excess property: did you mean `text`?",
        "- text: Missing key",
        '- times: Expected number, got "many"',
        "- loud: Expected boolean, got 1"
      ])
      const notObject = yield* run("echo", [1, 2])
      expect(notObject.modelOutput).toContain("arguments must be a JSON object")
      const notJson = yield* run("echo", "{text:")
      expect(notJson.modelOutput).toContain("arguments are not valid JSON")
    }).pipe(Effect.provide(system([Echo])))
  )

  it.effect("accepts arguments sent as a JSON string, and reports what it coerced", () =>
    Effect.gen(function* () {
      const result = yield* run("echo", '{"text": "ab", "times": "3", "loud": "true"}')
      expect(result).toMatchObject({
        status: "ok",
        modelOutput: "ABABAB",
        metadata: { times: 3, coercedArgs: ["times", "loud"] }
      })
      const notCoerced = yield* run("echo", { text: "a", times: "" })
      expect(notCoerced.status).toBe("error")
      expect(notCoerced.modelOutput).toContain('times: Expected number, got ""')
    }).pipe(Effect.provide(system([Echo])))
  )

  it.effect("a tool that is not retrySafe runs once after a transient failure", () => {
    const { tool, runs } = flaky("unsafe_flaky", false, 1)
    return Effect.gen(function* () {
      const result = yield* run("unsafe_flaky", {})
      expect(runs.count).toBe(1)
      expect(result).toMatchObject({ status: "error", attempts: 1, modelOutput: "busy (run 1)" })
      expect(result.error?.tag).toBe("TransientFailure")
    }).pipe(Effect.provide(system([tool])))
  })

  it.effect("a retrySafe tool retries one transient failure after 200 ms × attempt", () => {
    const { tool, runs } = flaky("safe_flaky", true, 1)
    return Effect.gen(function* () {
      const fiber = yield* Effect.forkChild(run("safe_flaky", {}))
      yield* TestClock.adjust("199 millis")
      expect(runs.count).toBe(1)
      yield* TestClock.adjust("1 millis")
      const result = yield* Fiber.join(fiber)
      expect(runs.count).toBe(2)
      expect(result).toMatchObject({ status: "ok", attempts: 2, modelOutput: "ok on run 2" })
    }).pipe(Effect.provide(system([tool])))
  })

  it.effect("a retrySafe tool is retried only once", () => {
    const { tool, runs } = flaky("always_busy", true, 5)
    return Effect.gen(function* () {
      const fiber = yield* Effect.forkChild(run("always_busy", {}))
      yield* TestClock.adjust("10 seconds")
      const result = yield* Fiber.join(fiber)
      expect(runs.count).toBe(2)
      expect(result).toMatchObject({ status: "error", attempts: 2, modelOutput: "busy (run 2)" })
    }).pipe(Effect.provide(system([tool])))
  })

  it.effect("stores the full output before capping: the middle of 10,000 lines comes back through output", () =>
    Effect.gen(function* () {
      const result = yield* run("lines", { lines: 10_000 }, "big")
      expect(result.truncated).toBe(true)
      expect(result.modelOutput.length).toBeLessThanOrEqual(30_000)
      expect(result.outputLines).toBe(10_000)
      const marker = result.modelOutput.match(
        /\[… lines ([\d,]+)–([\d,]+) of 10,000 omitted .* output \{"id": "big", "offset": (\d+), "limit": (\d+)\}/
      )
      expect(marker).not.toBeNull()
      const from = Number(marker![1]!.replace(/,/g, ""))
      expect(Number(marker![3])).toBe(from)
      expect(result.modelOutput).not.toContain("line 5000\n")

      const middle = yield* run("output", { id: "big", offset: 5000, limit: 3 }, "c2")
      expect(middle.status).toBe("ok")
      // Line numbers are padded to the width of the largest (10,000), so columns line up.
      expect(middle.modelOutput.split("\n").slice(1, 4)).toEqual([
        " 5000\tline 5000",
        " 5001\tline 5001",
        " 5002\tline 5002"
      ])

      const search = yield* run("output", { id: "big", pattern: "^line 777$" }, "c3")
      expect(search.modelOutput).toContain(" 777\tline 777")
      expect(search.modelOutput).toContain(" 776\tline 776")
    }).pipe(Effect.provide(system([Lines])))
  )

  it.effect("honours a tool's own maxResultSizeChars", () =>
    Effect.gen(function* () {
      const result = yield* run("small", {})
      expect(result.truncated).toBe(true)
      expect(result.modelOutput.length).toBeLessThanOrEqual(200)
      expect(result.outputChars).toBeGreaterThan(200)
    }).pipe(Effect.provide(system([Small])))
  )

  it.effect("caps the UI copy to its tail", () =>
    Effect.gen(function* () {
      const result = yield* run("lines", { lines: 1000 })
      expect(result.uiOutput.length).toBeLessThanOrEqual(500)
      expect(result.uiOutput.endsWith("line 1000")).toBe(true)
    }).pipe(Effect.provide(system([Lines], { uiMaxChars: 500 })))
  )

  it.live("a timeout is a failure with the partial output attached, never a slow success", () =>
    Effect.gen(function* () {
      const result = yield* run("hang_cancel", {})
      expect(result.status).toBe("timeout")
      expect(result.error?.tag).toBe("ToolTimeout")
      expect(result.modelOutput).toBe(
        "hang_cancel timed out after 200ms; the output so far follows.\nstarted\nworking\n"
      )
      expect(result.outputId).toBe("c1")
    }).pipe(Effect.provide(system([hang("hang_cancel", "cancel", "200 millis")])))
  )

  it.effect("a cancel stops a cancellable tool with what it printed; a blocking tool finishes", () =>
    Effect.gen(function* () {
      const orchestrator = yield* Orchestrator
      const cancel = yield* Deferred.make<void>()
      const context = { sessionId: "s", cancelled: Deferred.await(cancel) }
      const cancellable = yield* Effect.forkChild(
        orchestrator.execute({ id: "a", name: "hang_cancel", args: {} }, context)
      )
      const blocking = yield* Effect.forkChild(
        orchestrator.execute({ id: "b", name: "hang_block", args: { finishAfterMs: 1000 } }, context)
      )
      yield* TestClock.adjust("10 millis")
      yield* Deferred.succeed(cancel, undefined)
      const stopped = yield* Fiber.join(cancellable)
      expect(stopped.status).toBe("interrupted")
      expect(stopped.modelOutput).toBe(
        "hang_cancel was cancelled by the person; the output so far follows.\nstarted\nworking\n"
      )
      yield* TestClock.adjust("1 second")
      const finished = yield* Fiber.join(blocking)
      expect(finished).toMatchObject({ status: "ok", modelOutput: "started\nworking\nfinished\n" })
    }).pipe(
      Effect.provide(system([hang("hang_cancel", "cancel", "1 minute"), hang("hang_block", "block", "1 minute")]))
    )
  )

  it.effect("what a tool emits while it runs reaches the UI as live windows before the final copy", () =>
    Effect.gen(function* () {
      const events = yield* ToolEvents
      const seen: Array<ToolEvent> = []
      const subscription = yield* events.subscribe
      const collector = yield* Effect.forkChild(Stream.runForEach(subscription, (e) => Effect.sync(() => seen.push(e))))
      const fiber = yield* Effect.forkChild(run("hang_block", { finishAfterMs: 100 }))
      yield* TestClock.adjust("100 millis")
      yield* Fiber.join(fiber)
      yield* Effect.yieldNow
      yield* Fiber.interrupt(collector)
      const outputs = seen.flatMap((e) => (e.type === "tool_output" ? [[e.phase, e.offset, e.chunk] as const] : []))
      expect(outputs).toEqual([
        ["live", 0, "started\n"],
        ["live", 8, "working\n"],
        ["final", 0, "started\nworking\nfinished\n"]
      ])
      expect(seen.map((e) => e.type)).toEqual([
        "tool_start",
        "tool_output",
        "tool_output",
        "tool_output",
        "tool_complete"
      ])
    }).pipe(Effect.provide(system([hang("hang_block", "block", "1 minute")])))
  )

  it.effect("a bug in a tool becomes an error result, not a defect", () =>
    Effect.gen(function* () {
      const result = yield* run("boom", {})
      expect(result.status).toBe("error")
      expect(result.modelOutput).toBe(
        "boom failed unexpectedly (a bug in the tool, not in your call): undefined is not a function"
      )
    }).pipe(Effect.provide(system([Boom])))
  )

  it.live("a bug that shows after the tool waited is an error result too", () =>
    Effect.gen(function* () {
      const result = yield* run("late_boom", {})
      expect(result.status).toBe("error")
      expect(result.modelOutput).toBe(
        "late_boom failed unexpectedly (a bug in the tool, not in your call): x is undefined"
      )
    }).pipe(Effect.provide(system([LateBoom])))
  )

  it.effect("a bug in a tool's paths or validateInput is an error result too, and the tool never runs", () =>
    Effect.gen(function* () {
      const paths = yield* run("bad_paths", {})
      expect(paths.status).toBe("error")
      expect(paths.modelOutput).toBe(
        "bad_paths failed unexpectedly (a bug in the tool, not in your call): cannot read properties of undefined"
      )
      const validate = yield* run("bad_validate", {})
      expect(validate.status).toBe("error")
      expect(validate.modelOutput).toContain("validator bug")
    }).pipe(Effect.provide(system([BadPaths, BadValidate])))
  )

  it.effect("events are built only while someone listens; the result is the same either way", () =>
    Effect.gen(function* () {
      const events = yield* ToolEvents
      expect(events.listening()).toBe(false)
      const unheard = yield* run("echo", { text: "hello" }, "quiet")
      const seen: Array<ToolEvent> = []
      const heard = yield* Effect.scoped(
        Effect.gen(function* () {
          const subscription = yield* events.subscribe
          expect(events.listening()).toBe(true)
          yield* Effect.forkScoped(Stream.runForEach(subscription, (e) => Effect.sync(() => seen.push(e))))
          const result = yield* run("echo", { text: "hello" }, "loud")
          yield* Effect.yieldNow
          return result
        })
      )
      expect(events.listening()).toBe(false)
      expect(seen.map((e) => e.type)).toEqual(["tool_start", "tool_output", "tool_complete"])
      const { id: _a, outputId: _b, durationMs: _c, ...quiet } = unheard
      const { id: _d, outputId: _e, durationMs: _f, ...loud } = heard
      expect(quiet).toEqual(loud)
      // A stream counts as a listener for as long as it runs.
      const running = yield* Effect.forkChild(Stream.runDrain(events.stream), { startImmediately: true })
      yield* Effect.yieldNow
      expect(events.listening()).toBe(true)
      yield* Fiber.interrupt(running)
      expect(events.listening()).toBe(false)
    }).pipe(Effect.provide(system([Echo])))
  )

  it.effect("tool_start carries small arguments whole and a bounded preview of huge ones", () =>
    Effect.gen(function* () {
      const events = yield* ToolEvents
      const seen: Array<ToolEvent> = []
      const subscription = yield* events.subscribe
      const collector = yield* Effect.forkChild(Stream.runForEach(subscription, (e) => Effect.sync(() => seen.push(e))))
      yield* run("echo", { text: "small" }, "small")
      yield* run("echo", { text: "x".repeat(100_000) }, "huge")
      yield* Effect.yieldNow
      yield* Fiber.interrupt(collector)
      const starts = seen.flatMap((e) => (e.type === "tool_start" ? [e] : []))
      expect(starts[0]!.args).toEqual({ text: "small" })
      expect(starts[1]!.args).toMatchObject({ truncated: true, chars: 100_011 })
      expect(JSON.stringify(starts[1]).length).toBeLessThan(EVENT_WINDOW_CHARS)
    }).pipe(Effect.provide(system([Echo], { uiMaxChars: 1_000_000 })))
  )

  it.effect("validateInput, checkPermissions and requiresApproval each have their say", () =>
    Effect.gen(function* () {
      const orchestrator = yield* Orchestrator
      const call = (path: string, approve?: boolean) =>
        orchestrator.execute(
          { id: path, name: "guarded", args: { path } },
          approve === undefined ? { sessionId: "s" } : { sessionId: "s", approve: () => Effect.succeed(approve) }
        )
      const invalid = yield* call("", true)
      expect(invalid).toMatchObject({ status: "error", modelOutput: "path must not be empty; give a file path" })
      const denied = yield* call("/etc/passwd", true)
      expect(denied).toMatchObject({ status: "denied", modelOutput: "writes under /etc are never allowed" })
      const nobody = yield* call("/tmp/x")
      expect(nobody.status).toBe("denied")
      expect(nobody.modelOutput).toContain("No one is available to approve it")
      const declined = yield* call("/tmp/x", false)
      expect(declined.status).toBe("denied")
      expect(declined.modelOutput).toContain("declined")
      const approved = yield* call("/tmp/x", true)
      expect(approved).toMatchObject({ status: "ok", modelOutput: "wrote /tmp/x" })
    }).pipe(Effect.provide(system([Guarded])))
  )

  it.effect("emits start, windowed output and a complete event that never carries the UI copy", () =>
    Effect.gen(function* () {
      const events = yield* ToolEvents
      const seen: Array<ToolEvent> = []
      const subscription = yield* events.subscribe
      const collector = yield* Effect.forkChild(Stream.runForEach(subscription, (e) => Effect.sync(() => seen.push(e))))
      yield* run("guarded", { path: "/tmp/file" })
      yield* run("lines", { lines: 20_000 }, "c2")
      yield* Effect.yieldNow
      yield* Fiber.interrupt(collector)
      const first = seen.filter((e) => e.callId === "c1")
      expect(first[0]).toMatchObject({
        type: "tool_start",
        tool: "guarded",
        paths: ["/tmp/file"],
        operations: ["file.write"]
      })
      const big = seen.filter((e) => e.callId === "c2")
      const outputs = big.filter((e) => e.type === "tool_output")
      expect(outputs.length).toBeGreaterThan(1)
      for (const e of outputs)
        expect(e.type === "tool_output" && e.chunk.length).toBeLessThanOrEqual(EVENT_WINDOW_CHARS)
      const complete = big[big.length - 1]!
      expect(complete.type).toBe("tool_complete")
      expect(complete.type === "tool_complete" && "uiOutput" in complete.result).toBe(false)
      // The windows put together are the UI copy.
      const ui = outputs.map((e) => (e.type === "tool_output" ? e.chunk : "")).join("")
      expect(ui.endsWith("line 20000")).toBe(true)
    }).pipe(Effect.provide(system([Guarded, Lines], { uiMaxChars: 100_000 })))
  )

  it.effect("no event carries more than the UI cap, even when the model's budget is larger", () =>
    Effect.gen(function* () {
      const events = yield* ToolEvents
      const seen: Array<ToolEvent> = []
      const subscription = yield* events.subscribe
      const collector = yield* Effect.forkChild(Stream.runForEach(subscription, (e) => Effect.sync(() => seen.push(e))))
      const result = yield* run("lines", { lines: 5000 })
      yield* Effect.yieldNow
      yield* Fiber.interrupt(collector)
      expect(result.modelOutput.length).toBeGreaterThan(1000)
      for (const e of seen) {
        const carried = e.type === "tool_output" ? e.chunk : e.type === "tool_complete" ? e.result.modelOutput : ""
        expect(carried.length).toBeLessThanOrEqual(1000)
      }
    }).pipe(Effect.provide(system([Lines], { uiMaxChars: 1000 })))
  )
})

describe("Orchestrator events", () => {
  it.effect("tool_complete bounds large metadata (an image) to a window; the result keeps it whole", () =>
    Effect.gen(function* () {
      const events = yield* ToolEvents
      const seen: Array<ToolEvent> = []
      const subscription = yield* events.subscribe
      const collector = yield* Effect.forkChild(Stream.runForEach(subscription, (e) => Effect.sync(() => seen.push(e))))
      const result = yield* run("picture", {})
      yield* Effect.yieldNow
      yield* Fiber.interrupt(collector)
      expect((result.metadata.image as { data: string }).data).toHaveLength(200_000)
      const complete = seen.find((e) => e.type === "tool_complete")
      expect(complete?.type).toBe("tool_complete")
      if (complete?.type !== "tool_complete") return
      expect(complete.result.metadata).toEqual({ image: { omitted: true, chars: 200_034 }, width: 640 })
      for (const e of seen) expect(JSON.stringify(e).length).toBeLessThanOrEqual(1000)
    }).pipe(Effect.provide(system([Picture], { uiMaxChars: 1000 })))
  )
})

describe("Orchestrator.executeBatch", () => {
  it.effect("[read, read, <mutating>, read] runs as three batches, results in call order", () =>
    Effect.gen(function* () {
      const { Meet, Write, log } = yield* makeLatchTools(2)
      const results = yield* Effect.gen(function* () {
        const orchestrator = yield* Orchestrator
        return yield* orchestrator.executeBatch(
          [
            { id: "1", name: "meet", args: { tag: "r1" } },
            { id: "2", name: "meet", args: { tag: "r2" } },
            { id: "3", name: "write_thing", args: { tag: "w" } },
            { id: "4", name: "meet", args: { tag: "r3", alone: true } },
            { id: "5", name: "nope", args: {} }
          ],
          { sessionId: "s" }
        )
      }).pipe(Effect.provide(system([Meet, Write])))
      expect(results.map((r) => [r.id, r.status])).toEqual([
        ["1", "ok"],
        ["2", "ok"],
        ["3", "ok"],
        ["4", "ok"],
        ["5", "error"]
      ])
      // Both reads started before either ended (they ran together); the write waited for both.
      expect(log.slice(0, 2).sort()).toEqual(["start r1", "start r2"])
      expect(log.slice(2, 4).sort()).toEqual(["end r1", "end r2"])
      expect(log.slice(4)).toEqual(["write w", "start r3", "end r3"])
    })
  )
})
