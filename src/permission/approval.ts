/**
 * `Approval`: the one place a person is asked about a call. authorize (src/orchestrator/) asks
 * it when the permission engine, a hook or the tool's own check says "ask"; the answer is once,
 * always (for this rule, in this session), or no with a message that reaches the model.
 */
import { Context, Effect, Layer, Semaphore } from "effect"
import * as Prompt from "effect/cli/Prompt"
import { clip } from "../text/cut.ts"

export interface ApprovalQuestion {
  readonly sessionId: string
  readonly callId: string
  readonly tool: string
  readonly args: unknown
  /** Why it needs approval. */
  readonly reason: string
  /** The rule an "always" answer saves for the session; absent when "always" is not offered. */
  readonly always?: string
}

export type ApprovalAnswer =
  | { readonly answer: "once" }
  | { readonly answer: "always" }
  | {
      readonly answer: "deny"
      readonly message?: string
      /** Nobody was asked: no person is available here (the refusal is not a person's decision). */
      readonly unattended?: true
    }

export class Approval extends Context.Service<
  Approval,
  {
    readonly ask: (question: ApprovalQuestion) => Effect.Effect<ApprovalAnswer>
  }
>()("freecode/Approval") {
  /** No one to ask (the CLI without --yes, a batch job): refuses, saying why and what to do. */
  static readonly layerNonInteractive = Layer.succeed(
    Approval,
    Approval.of({
      ask: (q) =>
        Effect.succeed({
          answer: "deny",
          unattended: true,
          message: `${q.reason} No one is available to approve it here; do the task another way, or ask the person to allow it (a rule in freecode.json, or --yes).`
        })
    })
  )

  /** Approves everything once (the CLI's --yes). Deny rules still refuse before anyone is asked. */
  static readonly layerApproveAll = Layer.succeed(
    Approval,
    Approval.of({ ask: () => Effect.succeed({ answer: "once" }) })
  )

  /** For tests: answers with `answer` and records every question in `asked`. */
  static readonly layerTest = (
    answer: ApprovalAnswer | ((q: ApprovalQuestion) => ApprovalAnswer),
    asked: Array<ApprovalQuestion> = []
  ) =>
    Layer.succeed(
      Approval,
      Approval.of({
        ask: (q) =>
          Effect.sync(() => {
            asked.push(q)
            return typeof answer === "function" ? answer(q) : answer
          })
      })
    )

  /** Asks on the terminal (effect/cli prompts), one question at a time. Quitting the prompt is a no. */
  static readonly layerTerminal = Layer.effect(
    Approval,
    Effect.gen(function* () {
      const context = yield* Effect.context<Prompt.Environment>()
      const one = yield* Semaphore.make(1)
      const ask = (q: ApprovalQuestion): Effect.Effect<ApprovalAnswer> => {
        const args = JSON.stringify(q.args)
        const choices: Array<{ title: string; value: "once" | "always" | "deny" }> = [
          { title: "Yes, this once", value: "once" },
          ...(q.always === undefined
            ? []
            : [{ title: `Yes, and always allow ${q.always} in this session`, value: "always" as const }]),
          { title: "No, and tell the model what to do instead", value: "deny" }
        ]
        const prompt = Prompt.Select({
          message: `${q.tool} ${clip(args, 200, "...")}\n${q.reason}`,
          choices
        }).pipe(
          Prompt.flatMap((choice) =>
            choice === "deny"
              ? Prompt.String({ message: "Message for the model (optional)", default: "" }).pipe(
                  Prompt.map(
                    (message): ApprovalAnswer =>
                      message.trim() === "" ? { answer: "deny" } : { answer: "deny", message: message.trim() }
                  )
                )
              : Prompt.succeed<ApprovalAnswer>({ answer: choice })
          )
        )
        return Semaphore.withPermit(
          one,
          Prompt.run(prompt).pipe(
            Effect.provideContext(context),
            Effect.catch(() =>
              Effect.succeed<ApprovalAnswer>({ answer: "deny", message: "The person quit the prompt." })
            )
          )
        )
      }
      return Approval.of({ ask })
    })
  )
}
