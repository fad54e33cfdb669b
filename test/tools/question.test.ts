import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { afterAll, describe, expect, it } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import { testToolSystem } from "../../layers/test.ts"
import { Dispatcher } from "../../src/dispatch/dispatcher.ts"
import { Prompter, type PromptOutcome, type Question } from "../../src/prompt/prompter.ts"
import { DOWN, driveTerminal, ENTER, SPACE, type Step } from "../prompt/terminal.ts"

const root = NodeFs.realpathSync(NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "freecode-question-")))
afterAll(() => NodeFs.rmSync(root, { recursive: true, force: true }))

const questions = [
  {
    question: "Which database?",
    header: "Storage",
    options: [{ label: "SQLite", description: "embedded" }, { label: "Postgres" }]
  },
  { question: "Which checks?", options: [{ label: "lint" }, { label: "types" }, { label: "tests" }], multiple: true }
]

const ask = (prompter: Layer.Layer<Prompter> | undefined, args: unknown) =>
  Effect.scoped(
    Effect.gen(function* () {
      const context = yield* Layer.build(
        testToolSystem({ root, config: {}, sessions: "memory", ...(prompter === undefined ? {} : { prompter }) })
      )
      return yield* Context.get(context, Dispatcher).dispatch({ id: "q1", name: "question", args }, { sessionId: "s" })
    })
  )

describe("question", () => {
  it.live("with nobody to ask (the default), the model is told to decide itself and say so", () =>
    Effect.gen(function* () {
      const result = yield* ask(undefined, { questions })
      expect(result.status).toBe("ok")
      expect(result.modelOutput).toBe(
        "No person is available to answer (this session is not interactive). Decide yourself, and say in your reply what you decided and why."
      )
      expect(result.metadata.outcome).toBe("unavailable")
    })
  )

  it.live("answers come back one line per question; the prompter gets the questions as sent", () =>
    Effect.gen(function* () {
      let asked: ReadonlyArray<Question> = []
      const prompter = Prompter.layerWith((qs) => {
        asked = qs
        return Effect.succeed<PromptOutcome>({
          _tag: "Answered",
          answers: [
            { question: "Which database?", selected: ["SQLite"] },
            { question: "Which checks?", selected: ["lint", "tests"], custom: "and a benchmark" }
          ]
        })
      })
      const result = yield* ask(prompter, { questions })
      expect(asked).toEqual(questions)
      expect(result.modelOutput).toBe(
        [
          "The person answered:",
          "- Which database? → SQLite",
          "- Which checks? → lint, tests; (typed) and a benchmark"
        ].join("\n")
      )
      expect(result.metadata.outcome).toBe("answered")
    })
  )

  it.live("a dismissed question is its own outcome, telling the model not to ask again", () =>
    Effect.gen(function* () {
      const result = yield* ask(
        Prompter.layerWith(() => Effect.succeed<PromptOutcome>({ _tag: "Dismissed" })),
        {
          questions
        }
      )
      expect(result.title).toBe("question dismissed")
      expect(result.metadata.outcome).toBe("dismissed")
      expect(result.modelOutput).toContain("dismissed the questions without answering. Do not ask them again")
    })
  )

  it.live("bad questions are errors saying what to send, and never reach the person", () =>
    Effect.gen(function* () {
      let calls = 0
      const prompter = Prompter.layerWith(() => {
        calls++
        return Effect.succeed<PromptOutcome>({ _tag: "Dismissed" })
      })
      const cases = [
        [{ questions: [] }, "Ask 1 to 4 questions"],
        [{ questions: [{ question: "A?", options: [{ label: "only" }] }] }, "has 1 options; give 2 to 6"],
        [{ questions: [{ question: "A?", options: [{ label: "x" }, { label: "x" }] }] }, "same label"],
        [{ questions: [{ question: " ", options: [{ label: "x" }, { label: "y" }] }] }, "Question 1 is empty"]
      ] as const
      for (const [args, message] of cases) {
        const result = yield* ask(prompter, args)
        expect(result.status).toBe("error")
        expect(result.modelOutput).toContain(message)
      }
      expect(calls).toBe(0)
    })
  )
})

/** The terminal Prompter in a real process; keys go to its stdin. */
const terminal = (qs: ReadonlyArray<Question>, keys: ReadonlyArray<Step>) =>
  driveTerminal<PromptOutcome>(qs, qs[0]!.question, keys)

describe("Prompter.layerTerminal (a real process on Node's terminal)", () => {
  it.live(
    "pick one, pick several, or type an answer of your own",
    () =>
      Effect.gen(function* () {
        const outcome = yield* terminal(questions, [
          DOWN,
          { key: ENTER, until: "Which checks?" }, // Postgres
          // MultiSelect lists Select All and Inverse Selection first; then lint, types, tests, Type my own answer.
          DOWN,
          DOWN,
          SPACE, // lint
          DOWN,
          DOWN,
          SPACE, // tests
          DOWN,
          SPACE, // Type my own answer
          { key: ENTER, until: "Your answer:" },
          ..."benchmarks too".split(""),
          ENTER
        ])
        expect(outcome).toEqual({
          _tag: "Answered",
          answers: [
            { question: "Which database?", selected: ["Postgres"] },
            { question: "Which checks?", selected: ["lint", "tests"], custom: "benchmarks too" }
          ]
        })
      }),
    60_000
  )

  it.live(
    "Ctrl-C dismisses",
    () =>
      Effect.gen(function* () {
        expect(yield* terminal(questions.slice(0, 1), ["\x03"])).toEqual({ _tag: "Dismissed" })
      }),
    60_000
  )
})
