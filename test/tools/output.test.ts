import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { testToolSystem } from "../../layers/test.ts"
import { Orchestrator } from "../../src/orchestrator/orchestrator.ts"
import { OutputTool } from "../../src/tools/output.ts"
import { Lines } from "../orchestrator/fixtures.ts"

const system = testToolSystem({ root: process.cwd(), tools: [Lines, OutputTool] })
const call = (id: string, name: string, args: unknown, sessionId = "s") =>
  Orchestrator.use((o) => o.execute({ id, name, args }, { sessionId }))

describe("output", () => {
  it.effect("a window: numbered lines, and a last line saying where to continue", () =>
    Effect.gen(function* () {
      yield* call("src", "lines", { lines: 50 })
      const window = yield* call("w", "output", { id: "src", offset: 10, limit: 3 })
      expect(window.status).toBe("ok")
      expect(window.modelOutput.split("\n")).toEqual([
        "output of lines call src: 50 lines, 390 chars",
        "10\tline 10",
        "11\tline 11",
        "12\tline 12",
        "(lines 10–12 of 50; continue with offset=13)"
      ])
      const rest = yield* call("w2", "output", { id: "src", offset: 49 })
      expect(rest.modelOutput.split("\n").slice(1)).toEqual(["49\tline 49", "50\tline 50"])
    }).pipe(Effect.provide(system))
  )

  it.effect("a pattern: matching lines with a line of context, '--' between separate groups", () =>
    Effect.gen(function* () {
      yield* call("src", "lines", { lines: 50 })
      const found = yield* call("p", "output", { id: "src", pattern: "^line (7|30)$" })
      expect(found.modelOutput.split("\n")).toEqual([
        "output of lines call src: 50 lines, 390 chars",
        " 6\tline 6",
        " 7\tline 7",
        " 8\tline 8",
        "--",
        "29\tline 29",
        "30\tline 30",
        "31\tline 31"
      ])
      const limited = yield* call("p2", "output", { id: "src", pattern: "line", limit: 2 })
      expect(limited.modelOutput).toContain("(48 more matching lines; continue with offset=3 or a narrower pattern)")
      const none = yield* call("p3", "output", { id: "src", pattern: "nothing like it" })
      expect(none).toMatchObject({ status: "ok" })
      expect(none.modelOutput).toContain("No line matches /nothing like it/.")
    }).pipe(Effect.provide(system))
  )

  it.effect("an unknown id, another session's id, a bad regex and an offset past the end are clear errors", () =>
    Effect.gen(function* () {
      yield* call("src", "lines", { lines: 5 })
      const unknown = yield* call("u", "output", { id: "nope" })
      expect(unknown.status).toBe("error")
      expect(unknown.modelOutput).toContain('No stored output with id "nope" in this session')
      expect(unknown.modelOutput).toContain("Re-run the tool")
      const otherSession = yield* call("o", "output", { id: "src" }, "other")
      expect(otherSession.status).toBe("error")
      const badRegex = yield* call("r", "output", { id: "src", pattern: "(unclosed" })
      expect(badRegex.status).toBe("error")
      expect(badRegex.modelOutput).toMatch(
        /^Invalid regex "\(unclosed": missing closing \).*Escape regex metacharacters/
      )
      const past = yield* call("e", "output", { id: "src", offset: 9 })
      expect(past.modelOutput).toBe("offset 9 is past the end: the stored output has 5 lines.")
    }).pipe(Effect.provide(system))
  )
})
