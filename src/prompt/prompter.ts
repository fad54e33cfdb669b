/**
 * Asking the person: the `question` tool's questions go to a `Prompter`. The terminal one uses
 * effect/cli prompts (pick one, pick several, or type an answer of your own); the
 * non-interactive one says no person is there, so the model decides for itself.
 */
import { Context, Effect, Layer, Semaphore, type Terminal } from "effect"
import * as Prompt from "effect/cli/Prompt"
import type { FormOutcome, FormRequest } from "./form.ts"
import { terminalForm } from "./terminal-form.ts"

export interface QuestionOption {
  readonly label: string
  readonly description?: string
}

export interface Question {
  readonly question: string
  /** A short label for the question (a tab or a chip in a UI). */
  readonly header?: string
  readonly options: ReadonlyArray<QuestionOption>
  /** Whether several options may be picked. */
  readonly multiple?: boolean
}

export interface Answer {
  readonly question: string
  /** The labels picked. */
  readonly selected: ReadonlyArray<string>
  /** An answer the person typed instead of (or beside) the options. */
  readonly custom?: string
}

export type PromptOutcome =
  | { readonly _tag: "Answered"; readonly answers: ReadonlyArray<Answer> }
  /** The person saw the questions and declined to answer. */
  | { readonly _tag: "Dismissed" }
  /** No person can be asked (non-interactive run, a client without elicitation). */
  | { readonly _tag: "Unavailable"; readonly reason: string }

/**
 * Who answers the `question` tool when the system is built without a `prompter` option; read
 * once, when the layer is built (the way ConfigSource carries --config).
 */
export const PrompterSource = Context.Reference<PrompterShape | undefined>("freecode/PrompterSource", {
  defaultValue: () => undefined
})

const NOT_INTERACTIVE = "this session is not interactive"

const nonInteractive: PrompterShape = {
  ask: () => Effect.succeed({ _tag: "Unavailable", reason: NOT_INTERACTIVE }),
  elicit: () => Effect.succeed({ _tag: "Unavailable", reason: NOT_INTERACTIVE }),
  canVisit: () => Effect.succeed(false)
}

/**
 * Asks the person. `sessionId` is the session of the call asking: a server with a client per
 * session (MCP over HTTP) asks that session's client.
 */
export interface PrompterShape {
  readonly ask: (questions: ReadonlyArray<Question>, sessionId?: string) => Effect.Effect<PromptOutcome>
  /**
   * Shows the person a question an MCP server we connect to asked (an elicitation form, or a
   * URL to visit) and returns the answer as the person gave it; the caller holds it to the
   * form (form.ts). Absent: this asker can only ask multiple-choice questions, and such a
   * question finds nobody.
   */
  readonly elicit?: (request: FormRequest, sessionId?: string) => Effect.Effect<FormOutcome>
  /**
   * Whether a URL question would reach a person now, asked before anything is set up for one (an
   * upstream server's login: a listener, maybe a client registration). Absent: whenever `elicit` is given.
   */
  readonly canVisit?: (sessionId?: string) => Effect.Effect<boolean>
}

export class Prompter extends Context.Service<Prompter, PrompterShape>()("freecode/Prompter") {
  /** Nobody to ask: every question comes back Unavailable, saying so. */
  static readonly layerNonInteractive = Layer.succeed(Prompter, Prompter.of(nonInteractive))

  /**
   * What a caller provided in PrompterSource while building the system (the CLI's `mcp` command
   * provides MCP elicitation), else nobody: the default of a system built without `prompter`.
   */
  static readonly layerFromSource = Layer.effect(
    Prompter,
    Effect.gen(function* () {
      return Prompter.of((yield* PrompterSource) ?? nonInteractive)
    })
  )

  /** Answers from a function (embedders with their own UI, tests). */
  static readonly layerWith = (
    ask: (questions: ReadonlyArray<Question>) => Effect.Effect<PromptOutcome>,
    elicit?: (request: FormRequest) => Effect.Effect<FormOutcome>
  ) => Layer.succeed(Prompter, Prompter.of(elicit === undefined ? { ask } : { ask, elicit }))

  /** Asks on the terminal with effect/cli prompts; Ctrl-C or Escape dismisses. */
  static readonly layerTerminal = Layer.effect(
    Prompter,
    Effect.gen(function* () {
      const context = yield* Effect.context<Prompt.Environment>()
      return Prompter.of({
        ask: (questions) =>
          Effect.forEach(questions, askOne).pipe(
            Effect.map((answers): PromptOutcome => ({ _tag: "Answered", answers })),
            Effect.catchTag("QuitError", () => Effect.succeed<PromptOutcome>({ _tag: "Dismissed" })),
            Effect.provideContext(context),
            // Only one question on the terminal at a time.
            lock
          ),
        elicit: (request) => lock(Effect.provideContext(terminalForm(request), context))
      })
    })
  )
}

const lock = Semaphore.makeUnsafe(1).withPermits(1)

/** The choice that lets the person type an answer of their own. */
const OTHER = "\u0000other"

const askOne = Effect.fnUntraced(function* (
  q: Question
): Effect.fn.Return<Answer, Terminal.QuitError, Prompt.Environment> {
  const message = q.header === undefined ? q.question : `[${q.header}] ${q.question}`
  const choices = [
    ...q.options.map((o) => ({
      title: o.label,
      value: o.label,
      ...(o.description === undefined ? {} : { description: o.description })
    })),
    { title: "Type my own answer", value: OTHER }
  ]
  const picked =
    q.multiple === true
      ? yield* Prompt.run(Prompt.MultiSelect({ message, choices }))
      : [yield* Prompt.run(Prompt.Select({ message, choices }))]
  const selected = picked.filter((p) => p !== OTHER)
  if (!picked.includes(OTHER)) return { question: q.question, selected }
  const custom = yield* Prompt.run(Prompt.String({ message: "Your answer:" }))
  return { question: q.question, selected, custom }
})
