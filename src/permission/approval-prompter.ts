/**
 * Approval through a Prompter: the question a call raises goes to whoever answers the `question`
 * tool — over MCP, the client's elicitation form, so the person at the client decides. Where
 * nobody can be asked (a client without elicitation), the call is refused with the rule that
 * would allow it, so the person can add it once instead of meeting the refusal again.
 */
import { Effect, Layer } from "effect"
import { type Prompter, PrompterSource } from "../prompt/prompter.ts"
import { Approval, type ApprovalAnswer, type ApprovalQuestion } from "./approval.ts"

const ONCE = "Yes, this once"
const ALWAYS = "Yes, and don't ask again this session"
const NO = "No"

const argsLine = (args: unknown): string => {
  const text = JSON.stringify(args) ?? ""
  return text.length > 300 ? `${text.slice(0, 297)}...` : text
}

/** What to add to freecode.json so this call is allowed without asking. */
export const ruleHint = (q: ApprovalQuestion): string =>
  q.always === undefined
    ? "ask the person to allow it in freecode.json (permissions.allow)"
    : `ask the person to add "${q.always}" to permissions.allow in freecode.json`

export const approvalFromPrompter = (prompter: Prompter["Service"]): Approval["Service"] =>
  Approval.of({
    ask: (q) =>
      prompter
        .ask(
          [
            {
              header: "Approve",
              question: `${q.tool} ${argsLine(q.args)}\n${q.reason}`,
              options: [
                { label: ONCE },
                ...(q.always === undefined ? [] : [{ label: ALWAYS, description: q.always }]),
                { label: NO }
              ]
            }
          ],
          q.sessionId
        )
        .pipe(
          Effect.map((outcome): ApprovalAnswer => {
            if (outcome._tag === "Unavailable")
              return {
                answer: "deny",
                unattended: true,
                message: `${q.reason} No one is available to approve it here (${outcome.reason}); do the task another way, or ${ruleHint(q)}.`
              }
            if (outcome._tag === "Dismissed")
              return { answer: "deny", message: "The person dismissed the approval request." }
            const a = outcome.answers[0]
            const picked = a?.selected[0]
            if (picked === ONCE) return { answer: "once" }
            if (picked === ALWAYS) return { answer: "always" }
            return a?.custom === undefined ? { answer: "deny" } : { answer: "deny", message: a.custom }
          })
        )
  })

/**
 * The system's default: whoever answers the `question` tool answers approvals too (the `mcp`
 * command's PrompterSource: the client's elicitation); with no source, nobody
 * (Approval.layerNonInteractive).
 */
export const layerApprovalFromSource: Layer.Layer<Approval> = Layer.unwrap(
  Effect.map(
    PrompterSource,
    (source): Layer.Layer<Approval> =>
      source === undefined ? Approval.layerNonInteractive : Layer.succeed(Approval, approvalFromPrompter(source))
  )
)
