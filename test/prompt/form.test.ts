/** An upstream server's form answer held to the form (src/prompt/form.ts) before it is sent back. */
import { describe, expect, it } from "vitest"
import { formMisfit, heldToForm, withDefaults } from "../../src/prompt/form.ts"
import type { ElicitationForm } from "../../src/prompt/input-round.ts"

const form = {
  mode: "form",
  message: "Ship it?",
  requestedSchema: {
    type: "object",
    properties: {
      name: { type: "string", minLength: 2, maxLength: 5, default: "Ann" },
      email: { type: "string", format: "email" },
      when: { type: "string", format: "date" },
      age: { type: "integer", minimum: 1, maximum: 99 },
      score: { type: "number", default: 9.5 },
      size: { type: "string", enum: ["s", "m"] },
      tier: { type: "string", oneOf: [{ const: "free", title: "Free" }, { const: "pro" }] },
      tags: { type: "array", items: { anyOf: [{ const: "a" }, { const: "b" }] }, maxItems: 1 },
      ok: { type: "boolean" }
    },
    required: ["age"]
  }
} as unknown as ElicitationForm

describe("an elicitation answer held to its form", () => {
  it("fills in the defaults the person left alone, and keeps what they gave", () => {
    expect(withDefaults(form, { age: 3, name: "Bo" })).toEqual({ age: 3, name: "Bo", score: 9.5 })
  })

  it("passes an answer that fits, and names the first thing that does not", () => {
    expect(
      formMisfit(form, { age: 3, email: "a@b.c", when: "2026-12-02", size: "m", tier: "pro", tags: ["a"], ok: true })
    ).toBeUndefined()
    const cases: Array<[Record<string, unknown>, string]> = [
      [{}, "age is required"],
      [{ age: 3.5 }, "age must be a whole number"],
      [{ age: 100 }, "age must be at most 99"],
      [{ age: "3" }, "age must be a number"],
      [{ age: 3, name: "A" }, "name must be at least 2 characters"],
      [{ age: 3, email: "nope" }, "email must be a valid email"],
      [{ age: 3, when: "tomorrow" }, "when must be a valid date"],
      [{ age: 3, size: "xl" }, "size must be one of the offered options"],
      [{ age: 3, tier: "gold" }, "tier must be one of the offered options"],
      [{ age: 3, tags: ["c"] }, "tags must be a list of the offered options"],
      [{ age: 3, tags: ["a", "b"] }, "tags allows at most 1 picks"],
      [{ age: 3, ok: "yes" }, "ok must be true or false"],
      [{ age: 3, extra: 1 }, "extra is not a field of the form"]
    ]
    for (const [content, problem] of cases) expect(formMisfit(form, content), JSON.stringify(content)).toBe(problem)
  })

  it("a decline or a cancel goes back as it is, without content; an accepted URL visit carries none", () => {
    expect(heldToForm(form, { action: "decline", content: { age: 1 } })).toEqual({
      _tag: "Answer",
      answer: { action: "decline" }
    })
    expect(heldToForm(form, { action: "cancel" })).toEqual({ _tag: "Answer", answer: { action: "cancel" } })
    const url = { mode: "url", message: "Sign in", url: "https://x.example", elicitationId: "e" } as const
    expect(heldToForm(url, { action: "accept", content: { age: 1 } })).toEqual({
      _tag: "Answer",
      answer: { action: "accept" }
    })
  })

  it("an accepted answer is sent with its defaults, or refused with the reason", () => {
    expect(heldToForm(form, { action: "accept", content: { age: 4 } })).toEqual({
      _tag: "Answer",
      answer: { action: "accept", content: { age: 4, name: "Ann", score: 9.5 } }
    })
    expect(heldToForm(form, { action: "accept" })).toEqual({
      _tag: "Unavailable",
      reason: "the answer does not fit the form: age is required"
    })
  })
})
