import { describe, expect, it } from "@effect/vitest"
import { Result } from "effect"
import { EXPECTED_SHAPE, malformedLine, parseTurn } from "../../src/cli/protocol.ts"

const problem = (line: string) => {
  const r = parseTurn(line)
  if (Result.isSuccess(r)) throw new Error(`expected a problem with ${line}`)
  return r.failure
}

describe("parseTurn", () => {
  it("reads an array of calls, keeping args as sent (object or string)", () => {
    const r = parseTurn(
      '[{"id":"a","name":"read","args":{"path":"x"}},{"id":"b","name":"ls","args":"{}"},{"id":"c","name":"ls"}]'
    )
    expect(r).toEqual(
      Result.succeed([
        { id: "a", name: "read", args: { path: "x" } },
        { id: "b", name: "ls", args: "{}" },
        { id: "c", name: "ls", args: undefined }
      ])
    )
  })

  it("says what is wrong and what was expected", () => {
    expect(problem("{nope")).toMatch(/^not valid JSON \(/)
    expect(problem('{"id":"a","name":"read"}')).toMatch(/^expected a JSON array of calls, got an object\./)
    expect(problem("[1]")).toMatch(/^call 1 is a number, not a call object\./)
    expect(problem('[{"id":"a","name":"x"},{"name":"read"}]')).toMatch(/^call 2 has no string "id"\./)
    expect(problem('[{"id":"a","name":7}]')).toMatch(/^call 1 \(id "a"\) has no string "name"\./)
    for (const bad of ["{nope", "{}", "[1]", '[{"name":"read"}]']) expect(problem(bad)).toContain(EXPECTED_SHAPE)
  })

  it("an error line names the input line", () => {
    expect(malformedLine(3, "bad")).toEqual({ line: 3, status: "error", modelOutput: "line 3: bad" })
  })
})
