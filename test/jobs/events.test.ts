/**
 * A background job's output keeps reaching a UI through ToolEvents after the call that started
 * it has completed: live tool_output windows tagged with the job's id, whose offsets count
 * characters in the job's whole output. Real processes; the job answers input written after
 * the call completed, so the order asserted is cause and effect, not a race.
 */
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Fiber, Stream } from "effect"
import { testToolSystem } from "../../layers/test.ts"
import { EVENT_WINDOW_CHARS, type ToolEvent, ToolEvents, type ToolOutputEvent } from "../../src/events/events.ts"
import { Orchestrator } from "../../src/orchestrator/orchestrator.ts"
import { BashTool } from "../../src/tools/bash.ts"
import { JobTool } from "../../src/tools/job.ts"

const call = (name: string, args: Record<string, unknown>, id: string) =>
  Orchestrator.use((o) => o.execute({ id, name, args }, { sessionId: "s" }))

const root = NodeFs.realpathSync(NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "freecode-job-events-")))

const jobWindows = (seen: ReadonlyArray<ToolEvent>, jobId: string): Array<ToolOutputEvent> =>
  seen.flatMap((e) => (e.type === "tool_output" && e.jobId === jobId ? [e] : []))

/** The job's output as the windows give it, checking that they follow on from each other. */
const joined = (ws: ReadonlyArray<ToolOutputEvent>): string => {
  let text = ""
  for (const w of ws) {
    expect(w.offset).toBe(text.length)
    text += w.chunk
  }
  return text
}

const waitFor = (seen: ReadonlyArray<ToolEvent>, jobId: string, want: string) =>
  Effect.gen(function* () {
    for (let i = 0; i < 100 && !joined(jobWindows(seen, jobId)).includes(want); i++) yield* Effect.sleep("100 millis")
  })

/** Subscribes to the events now and collects every one into `seen`, until `collector` is interrupted. */
const collect = Effect.gen(function* () {
  const seen: Array<ToolEvent> = []
  const subscription = yield* (yield* ToolEvents).subscribe
  const collector = yield* Effect.forkChild(Stream.runForEach(subscription, (e) => Effect.sync(() => seen.push(e))))
  return { seen, collector }
})

describe("background job events", () => {
  it.live("a job's output keeps flowing as tool_output tagged with its id after its call completed", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const { seen, collector } = yield* collect
        const started = yield* call(
          "bash",
          { command: `printf 'héllo ✓\\n'; read -r x; echo "got $x"; sleep 300`, run_in_background: true },
          "b1"
        )
        expect(started.metadata?.jobId).toBe("job-1")
        yield* waitFor(seen, "job-1", "héllo")
        const completed = seen.findIndex((e) => e.type === "tool_complete" && e.callId === "b1")
        expect(completed).toBeGreaterThan(-1)

        yield* call("job", { id: "job-1", input: "more\n" }, "j1")
        yield* waitFor(seen, "job-1", "got more")
        const ws = jobWindows(seen, "job-1")
        // Offsets are characters: "héllo ✓\n" is 8 of them (11 bytes).
        expect(joined(ws)).toBe("héllo ✓\ngot more\n")
        expect(ws.find((w) => w.chunk.includes("got more"))?.offset).toBe(8)
        for (const w of ws) expect(w).toMatchObject({ sessionId: "s", callId: "b1", tool: "bash", phase: "live" })
        // What the job printed after its input arrived came after the bash call had completed.
        const answer = seen.findIndex((e) => e.type === "tool_output" && e.jobId === "job-1" && e.chunk.includes("got"))
        expect(answer).toBeGreaterThan(completed)

        yield* call("job", { id: "job-1", stop: true }, "j2")
        yield* Fiber.interrupt(collector)
      })
    ).pipe(Effect.provide(testToolSystem({ root, tools: [BashTool, JobTool] })))
  )

  it.live("a UI that subscribes late gets the job's output from its start", () =>
    Effect.scoped(
      Effect.gen(function* () {
        yield* call(
          "bash",
          { command: `echo early; read -r x; echo "late $x"; sleep 300`, run_in_background: true },
          "b1"
        )
        // Nobody listened while it printed "early": it was not read for a UI, so it is still to come.
        const { seen, collector } = yield* collect
        yield* call("job", { id: "job-1", input: "one\n" }, "j1")
        yield* waitFor(seen, "job-1", "late one")
        expect(joined(jobWindows(seen, "job-1"))).toBe("early\nlate one\n")
        yield* call("job", { id: "job-1", stop: true }, "j2")
        yield* Fiber.interrupt(collector)
      })
    ).pipe(Effect.provide(testToolSystem({ root, tools: [BashTool, JobTool] })))
  )

  it.live(
    "a fast job: windows stay small, their offsets count every character across reads that split one, and the last says how it ended",
    () =>
      Effect.scoped(
        Effect.gen(function* () {
          const { seen, collector } = yield* collect
          // 6 bytes and 3 characters a line: 1 MiB reads end inside a character.
          const lines = 400_000
          yield* call("bash", { command: `yes 'é✓' | head -n ${lines}`, run_in_background: true }, "b1")
          const total = lines * 3
          const end = () => {
            const last = jobWindows(seen, "job-1").at(-1)
            return last === undefined ? 0 : last.offset + last.chunk.length
          }
          const ended = () => jobWindows(seen, "job-1").at(-1)?.jobState !== undefined
          for (let i = 0; i < 100 && !ended(); i++) yield* Effect.sleep("100 millis")
          const ws = jobWindows(seen, "job-1")
          expect(end()).toBe(total)
          // Its last event says how it ended: an empty window at the end of its output.
          expect(ws.at(-1)).toMatchObject({ offset: total, chunk: "", jobState: { state: "exited", code: 0 } })
          expect(ws.slice(0, -1).every((w) => w.jobState === undefined)).toBe(true)
          let previous = 0
          for (const w of ws) {
            expect(w.chunk.length).toBeLessThanOrEqual(EVENT_WINDOW_CHARS)
            expect(w.offset).toBeGreaterThanOrEqual(previous)
            // The output repeats "é✓\n", so the offset says exactly what the window must hold.
            const expected = Array.from({ length: w.chunk.length }, (_, k) => "é✓\n"[(w.offset + k) % 3]).join("")
            expect(w.chunk).toBe(expected)
            previous = w.offset + w.chunk.length
          }
          yield* Fiber.interrupt(collector)
        })
      ).pipe(Effect.provide(testToolSystem({ root, tools: [BashTool, JobTool] })))
  )
})
