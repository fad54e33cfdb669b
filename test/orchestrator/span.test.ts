/** A span per call, for an embedder's tracer (what it costs with none: bench/cold-ab.ts, docs/benchmarks.md). */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Tracer } from "effect"
import { testToolSystem } from "../../layers/test.ts"
import { Orchestrator } from "../../src/orchestrator/orchestrator.ts"
import { Echo } from "./fixtures.ts"

const recording = () => {
  const spans: Array<Tracer.Span> = []
  const tracer = Tracer.make({
    span(options) {
      const span = Tracer.nativeTracer.span(options)
      spans.push(span)
      return span
    }
  })
  return { spans, tracer }
}

const run = (name: string, id: string) =>
  Orchestrator.use((o) => o.execute({ id, name, args: { text: "hi" } }, { sessionId: "s" }))

describe("a span per call", () => {
  it.effect("tool.call carries the name and call id as sent, the tool it resolved to and its status", () => {
    const { spans, tracer } = recording()
    return Effect.gen(function* () {
      yield* run("ECHO", "c1")
      yield* run("nope", "c2")
      const calls = spans.filter((s) => s.name === "tool.call")
      expect(calls.map((s) => Object.fromEntries(s.attributes))).toEqual([
        { "tool.name": "ECHO", "tool.call_id": "c1", "tool.id": "echo", "tool.status": "ok" },
        { "tool.name": "nope", "tool.call_id": "c2", "tool.id": "nope", "tool.status": "error" }
      ])
      expect(calls.every((s) => s.status._tag === "Ended")).toBe(true)
    }).pipe(
      Effect.provide(testToolSystem({ root: process.cwd(), tools: [Echo] })),
      Effect.provideService(Tracer.Tracer, tracer)
    )
  })
})
