/**
 * `question`: asks the person one or more multiple-choice questions through the Prompter
 * (a terminal, a UI, MCP elicitation) and returns the answers. Without a person to ask, it says
 * so, and the model decides for itself.
 */
import { Duration, Effect, Schema } from "effect"
import { Prompter } from "../prompt/prompter.ts"
import { fail } from "../tool/errors.ts"
import { defineTool } from "../tool/tool.ts"

const MAX_QUESTIONS = 4
const MAX_OPTIONS = 6

const Parameters = Schema.Struct({
  questions: Schema.Array(
    Schema.Struct({
      question: Schema.String.annotate({ description: "The whole question, ending with ?" }),
      header: Schema.optionalKey(Schema.String.annotate({ description: "A label of at most 12 characters." })),
      options: Schema.Array(
        Schema.Struct({
          label: Schema.String.annotate({ description: "A short answer (1-5 words)." }),
          description: Schema.optionalKey(Schema.String.annotate({ description: "What picking it means." }))
        })
      ).annotate({ description: `2-${MAX_OPTIONS} choices; the person may also type their own answer.` }),
      multiple: Schema.optionalKey(Schema.Boolean.annotate({ description: "Allow picking several (default false)." }))
    })
  ).annotate({ description: `1-${MAX_QUESTIONS} questions, asked in order.` })
})

export const QuestionTool = defineTool({
  id: "question",
  description:
    "Ask the person multiple-choice questions when you need a decision only they can make (requirements, preferences, a choice between approaches). They can also type their own answer. Do not ask what you can find out yourself.",
  parameters: Parameters,
  permissions: { operations: ["person.ask"] },
  interruptBehavior: "cancel",
  // A person may take a while to answer.
  timeout: Duration.hours(1),
  execute: ({ questions }, ctx) =>
    Effect.gen(function* () {
      if (questions.length === 0 || questions.length > MAX_QUESTIONS) {
        return yield* fail(`Ask 1 to ${MAX_QUESTIONS} questions at a time (got ${questions.length}).`)
      }
      for (const [i, q] of questions.entries()) {
        if (q.question.trim() === "") return yield* fail(`Question ${i + 1} is empty; write the question.`)
        if (q.options.length < 2 || q.options.length > MAX_OPTIONS) {
          return yield* fail(
            `Question ${i + 1} has ${q.options.length} options; give 2 to ${MAX_OPTIONS} (the person can always type their own answer).`
          )
        }
        const labels = q.options.map((o) => o.label.trim())
        if (labels.some((l) => l === "")) return yield* fail(`Question ${i + 1} has an option with an empty label.`)
        if (new Set(labels).size !== labels.length) {
          return yield* fail(`Question ${i + 1} has two options with the same label; make each label distinct.`)
        }
      }
      const prompter = yield* Prompter
      const outcome = yield* prompter.ask(questions, ctx.sessionId)
      switch (outcome._tag) {
        case "Unavailable":
          return {
            title: "question: no person available",
            output: `No person is available to answer (${outcome.reason}). Decide yourself, and say in your reply what you decided and why.`,
            metadata: { outcome: "unavailable" }
          }
        case "Dismissed":
          return {
            title: "question dismissed",
            output:
              "The person dismissed the questions without answering. Do not ask them again; go on with your best judgment and say what you assumed, or stop and explain what you need.",
            metadata: { outcome: "dismissed" }
          }
        case "Answered": {
          const lines = outcome.answers.map((a) => {
            const parts = [
              ...(a.selected.length > 0 ? [a.selected.join(", ")] : []),
              ...(a.custom === undefined ? [] : [`(typed) ${a.custom}`])
            ]
            return `- ${a.question} → ${parts.length > 0 ? parts.join("; ") : "(nothing picked)"}`
          })
          return {
            title: "question answered",
            output: ["The person answered:", ...lines].join("\n"),
            metadata: { outcome: "answered", answers: outcome.answers }
          }
        }
      }
    })
})
