/**
 * An upstream server's question on the terminal (Prompter.layerTerminal's `elicit`, a real
 * process on Node's terminal): a form field by field, a decline, Ctrl-C as a cancel, a URL.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import type { FormOutcome } from "../../src/prompt/form.ts"
import { DOWN, driveTerminal, ENTER } from "./terminal.ts"

const form = {
  mode: "form",
  message: "How many apples?",
  requestedSchema: {
    type: "object",
    properties: {
      size: { type: "string", title: "Size", enum: ["small", "large"] },
      note: { type: "string", title: "Note", default: "none" }
    }
  }
}

const drive = (input: unknown, first: string, keys: Parameters<typeof driveTerminal>[2]) =>
  driveTerminal<FormOutcome>(input, first, keys)

describe("a server's question on the terminal", () => {
  it.live(
    "a form: yes to answering, then each field with the prompt for its type (a pick, text with its default)",
    () =>
      Effect.gen(function* () {
        const outcome = yield* drive({ form }, "How many apples?", [
          // y answers the yes/no at once.
          { key: "y", until: "Size" },
          DOWN,
          { key: ENTER, until: "Note" },
          ENTER
        ])
        expect(outcome).toEqual({
          _tag: "Answer",
          answer: { action: "accept", content: { size: "large", note: "none" } }
        })
      }),
    60_000
  )

  it.live(
    "no to answering is a decline; Ctrl-C is a cancel",
    () =>
      Effect.gen(function* () {
        expect(yield* drive({ form }, "How many apples?", ["n"])).toEqual({
          _tag: "Answer",
          answer: { action: "decline" }
        })
        expect(yield* drive({ form }, "How many apples?", ["\x03"])).toEqual({
          _tag: "Answer",
          answer: { action: "cancel" }
        })
      }),
    60_000
  )

  it.live(
    "a URL is shown, and the person says whether they went there",
    () =>
      Effect.gen(function* () {
        const url = {
          mode: "url",
          message: "Sign in to the shop",
          url: "https://shop.example/login",
          elicitationId: "e"
        }
        expect(yield* drive({ form: url }, "https://shop.example/login", ["y"])).toEqual({
          _tag: "Answer",
          answer: { action: "accept" }
        })
      }),
    60_000
  )
})
