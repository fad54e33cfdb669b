import { spawn } from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { afterAll, describe, expect, it } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import { Dispatcher } from "../../src/dispatch/dispatcher.ts"
import { testToolSystem } from "../../src/layers/test.ts"
import { Prompter, type PromptOutcome, type Question } from "../../src/prompt/prompter.ts"

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

/** A key, or a key that moves to the next prompt and the text that prompt shows when it is drawn. */
type Step = string | { readonly key: string; readonly until: string }

/** The terminal Prompter in a real process; keys go to its stdin. */
const terminal = (qs: ReadonlyArray<Question>, keys: ReadonlyArray<Step>) =>
  Effect.promise(
    () =>
      new Promise<PromptOutcome>((resolve, reject) => {
        const child = spawn(
          process.execPath,
          [NodePath.resolve(import.meta.dirname, "../fixtures/prompter.ts"), JSON.stringify(qs)],
          { stdio: ["pipe", "pipe", "pipe"] }
        )
        let stderr = ""
        // Paced by the prompt itself, as a person types after seeing the screen: the first key
        // once the first prompt is drawn, each next key once the prompt has answered the last
        // (its redraw or echo), and after a key that moves on, once the next prompt is drawn (a
        // key before a prompt is drawn would be lost).
        let awaiting: string | undefined = qs[0]!.question
        let seen = ""
        let i = 0
        const next = () => {
          const step = keys[i++]
          if (step === undefined) return
          awaiting = typeof step === "string" ? "" : step.until
          seen = ""
          child.stdin.write(typeof step === "string" ? step : step.key)
        }
        child.stdout.on("data", (b: Buffer) => {
          if (awaiting === undefined) return
          seen += b.toString()
          if (!seen.includes(awaiting)) return
          awaiting = undefined
          // After the chunk that answered the key is handled, not in the middle of its redraw.
          setImmediate(next)
        })
        child.stderr.on("data", (b: Buffer) => (stderr += b.toString()))
        child.on("error", reject)
        child.on("close", () => {
          try {
            resolve(JSON.parse(stderr.trim().split("\n").at(-1)!) as PromptOutcome)
          } catch {
            reject(new Error(`no outcome; stderr: ${stderr}`))
          }
        })
      })
  )

const DOWN = "\x1b[B"
const ENTER = "\r"
const SPACE = " "

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
