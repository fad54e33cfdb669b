/**
 * Runs a sub-agent: a child with its own session, a narrowed Dispatcher and the parent's rules.
 * The child's dispatcher is the parent's narrowed by the sub-agent's profile, and a call must
 * pass every profile in the chain, so the child's rules are the intersection of its own and its
 * parent's: it can never do what the parent could not.
 */
import { Context, Effect, Layer, Option } from "effect"
import type { LanguageModel } from "effect/ai"
import { CurrentDispatcher, Dispatcher } from "../dispatch/dispatcher.ts"
import type { HistoryBudget } from "../output/history-budget.ts"
import { Sessions } from "../session/sessions.ts"

export { CurrentDispatcher }

import { AgentFailure, type LoopResult, runToolLoop } from "./loop.ts"

/** Sub-agent types and the profile each runs under; any other name is a profile from freecode.json. */
export const SUBAGENT_TYPES: Readonly<Record<string, string | undefined>> = {
  /** Looks, never changes: the read-only tools. */
  explore: "read-only",
  /** Whatever the parent may do. */
  general: undefined
}

export interface SubagentRequest {
  readonly description: string
  readonly prompt: string
  readonly subagentType: string
  readonly parentSessionId: string
  readonly callId: string
}

export interface SubagentResult extends LoopResult {
  readonly sessionId: string
}

export interface RunnerOptions {
  /** Model turns a child gets (default 25). */
  readonly maxTurns?: number
  /** The child's system prompt (default: a short one saying it is a sub-agent). */
  readonly system?: string
}

const DEFAULT_SYSTEM =
  "You are a sub-agent of a coding agent, given one task. Use the tools to do it, then reply with what you found or did, briefly and completely: your reply is all the parent sees."

export class SubagentRunner extends Context.Service<
  SubagentRunner,
  { readonly run: (request: SubagentRequest) => Effect.Effect<SubagentResult, AgentFailure> }
>()("freecode/SubagentRunner") {
  /** The tool loop on effect/ai's LanguageModel (loop.ts); the embedder provides the model. */
  static readonly layerLanguageModel = (
    options: RunnerOptions = {}
  ): Layer.Layer<SubagentRunner, never, LanguageModel.LanguageModel | Dispatcher | HistoryBudget> =>
    Layer.effect(
      SubagentRunner,
      Effect.gen(function* () {
        const context = yield* Effect.context<LanguageModel.LanguageModel | HistoryBudget>()
        const base = yield* Dispatcher
        const sessions = yield* Effect.serviceOption(Sessions)
        return SubagentRunner.of({
          run: (request) =>
            Effect.gen(function* () {
              const parent = (yield* CurrentDispatcher) ?? base
              const profile =
                request.subagentType in SUBAGENT_TYPES ? SUBAGENT_TYPES[request.subagentType] : request.subagentType
              const child =
                profile === undefined
                  ? parent
                  : yield* parent.withProfile(profile).pipe(
                      Effect.mapError(
                        (e) =>
                          new AgentFailure({
                            message: `unknown subagent_type ${JSON.stringify(request.subagentType)} (${e.message}). Use ${Object.keys(SUBAGENT_TYPES).join(" or ")}, or a profile in freecode.json.`
                          })
                      )
                    )
              const sessionId = `${request.parentSessionId}/agent-${request.callId}`
              const result = yield* runToolLoop({
                dispatcher: child,
                sessionId,
                system: options.system ?? DEFAULT_SYSTEM,
                prompt: request.prompt,
                maxTurns: options.maxTurns ?? 25
              }).pipe(
                Effect.provideService(CurrentDispatcher, child),
                Effect.provideContext(context),
                // The child's session ends with its run: its state (reads, outputs, grants, jobs) goes now, not at the cap.
                Effect.ensuring(Option.isSome(sessions) ? sessions.value.end(sessionId) : Effect.void)
              )
              return { ...result, sessionId }
            })
        })
      })
    )
}
