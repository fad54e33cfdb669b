/**
 * Where a 2025-era server's `elicitation/create` goes (src/mcp/questions.ts): it does not say
 * which call asked, so it goes only where the person is certain — never to the wrong person.
 */
import { describe, expect, it } from "vitest"
import { Desk, questionOf, type Relayed, type Waiting } from "../../src/mcp/questions.ts"

const form = { message: "How many?", requestedSchema: { type: "object", properties: { n: { type: "integer" } } } }

const waiting = (key: unknown, asked: Array<unknown>, relayed: Relayed): Waiting => ({
  key,
  ask: async (question) => {
    asked.push({ key, question })
    return relayed
  }
})

const signal = new AbortController().signal

describe("the desk of a connection", () => {
  it("one person's calls in flight: the question goes to them; a refusal marks the call", async () => {
    const asked: Array<unknown> = []
    const desk = new Desk()
    const a = waiting("s1", asked, { _tag: "Answer", answer: { action: "accept", content: { n: 2 } } })
    desk.enter(a)
    desk.enter(waiting("s1", asked, { _tag: "Answer", answer: { action: "decline" } }))
    expect(await desk.answer(form, signal)).toEqual({ action: "accept", content: { n: 2 } })
    expect(asked).toHaveLength(1)

    const lone = new Desk()
    const refused = waiting("s2", asked, { _tag: "Refused", message: "nobody here" })
    lone.enter(refused)
    await expect(lone.answer(form, signal)).rejects.toThrow("Nobody could answer")
    expect(refused.refused).toBe("nobody here")
  })

  it("calls of two people in flight, or none: refused, and nobody is asked", async () => {
    const asked: Array<unknown> = []
    const desk = new Desk()
    desk.enter(waiting("s1", asked, { _tag: "Answer", answer: { action: "accept" } }))
    desk.enter(waiting("s2", asked, { _tag: "Answer", answer: { action: "accept" } }))
    await expect(desk.answer(form, signal)).rejects.toThrow("calls from several people")
    await expect(new Desk().answer(form, signal)).rejects.toThrow("no call of ours is waiting")
    expect(asked).toEqual([])
  })

  it("a malformed question is refused saying what is wrong", async () => {
    expect(questionOf({})).toBe("it has no message")
    expect(questionOf({ message: "x", requestedSchema: {} })).toBe("its requestedSchema has no properties")
    expect(questionOf({ message: "x", mode: "url", url: "file:///etc/passwd" })).toBe(
      "its url is not a web address (file:)"
    )
    expect(questionOf({ message: "x", mode: "other" })).toBe("its mode other is unknown")
    const desk = new Desk()
    desk.enter(waiting("s", [], { _tag: "Answer", answer: { action: "accept" } }))
    await expect(desk.answer({ message: 1 }, signal)).rejects.toThrow("malformed")
  })
})
