/**
 * What a loop (and the CLI, and the MCP server) calls for each model tool call:
 *
 *   permission engine (rules, mode, profile, what the call touches)
 *   → PreToolUse hooks (may block, rewrite the input — which is then checked again — or decide)
 *   → Approval, when the answer is "ask" (the one place a person is asked)
 *   → Orchestrator.execute (the tool's own checkPermissions / requiresApproval ask through the
 *     same Approval, and are not asked twice for a call the person or a rule already allowed)
 *   → PostToolUse hooks.
 *
 * The decision and the hook outcomes go into the result's metadata (`permission`, `hooks`).
 */
import { Context, Effect, Layer, Result, Semaphore } from "effect"
import type { ConfigError } from "../config/load.ts"
import { ToolEvents } from "../events/events.ts"
import { type HookOutcome, Hooks } from "../hooks/hooks.ts"
import { declaredConcurrencySafe, runInBatches } from "../orchestrator/batching.ts"
import { type ApprovalRequest, type CallContext, type DecodedCall, Orchestrator } from "../orchestrator/orchestrator.ts"
import { Approval, type ApprovalAnswer } from "../permission/approval.ts"
import { type Decision, PermissionEngine, type Policy } from "../permission/engine.ts"
import { ToolRegistry } from "../registry/registry.ts"
import { coerceArgs } from "../schema/coerce.ts"
import { isRecord } from "../schema/json-schema.ts"
import type { ToolCall, ToolResult, ToolStatus } from "../tool/result.ts"
import type { Searchability, Tool, ToolContext } from "../tool/tool.ts"
import { Workspace } from "../tool/workspace.ts"

/**
 * The dispatcher the current call runs under. A narrowed dispatcher (withProfile) provides itself
 * around its calls, and the sub-agent runner provides each child's, so an `agent` call starts
 * its child from the rules it was made under; unset, the tool system's own Dispatcher is it.
 */
export const CurrentDispatcher = Context.Reference<DispatcherShape | undefined>("freecode/CurrentDispatcher", {
  defaultValue: () => undefined
})

export interface DispatcherShape {
  readonly dispatch: (call: ToolCall, context: CallContext) => Effect.Effect<ToolResult>
  /** One model turn: the calls run in planned batches, results in call order. */
  readonly dispatchBatch: (
    calls: ReadonlyArray<ToolCall>,
    context: CallContext
  ) => Effect.Effect<ReadonlyArray<ToolResult>>
  /**
   * The dispatcher a sub-agent gets: this one's rules narrowed by a profile (a name from
   * freecode.json or a built-in — `read-only`, `plan` — or a compiled Policy). Never wider.
   */
  readonly withProfile: (profile: string | Policy) => Effect.Effect<DispatcherShape, ConfigError>
  /** The tools an agent under this dispatcher may use (the profiles' tool filters). */
  readonly tools: Effect.Effect<ReadonlyArray<Tool>>
}

/** What the permission step put in a result's metadata. */
export interface PermissionMetadata {
  readonly behavior: Decision["behavior"]
  readonly by: Decision["by"]
  readonly reason: string
  readonly policy: string
  readonly rule?: string
}

const parseRaw = (raw: unknown): unknown => {
  if (typeof raw !== "string") return raw ?? {}
  try {
    return raw.trim() === "" ? {} : JSON.parse(raw)
  } catch {
    return undefined
  }
}

const permissionMetadata = (d: Decision): PermissionMetadata => ({
  behavior: d.behavior,
  by: d.by,
  reason: d.reason,
  policy: d.policy,
  ...(d.rule === undefined ? {} : { rule: d.rule })
})

/** Who may stand in for a person's yes: a rule, the mode, a saved approval, a hook, or the person. */
const settled = (d: Decision) => d.behavior === "allow" && d.by !== "declaration"

export class Dispatcher extends Context.Service<Dispatcher, DispatcherShape>()("freecode/Dispatcher") {
  static readonly layer = Layer.effect(
    Dispatcher,
    Effect.gen(function* () {
      const orchestrator = yield* Orchestrator
      const registry = yield* ToolRegistry
      const engine = yield* PermissionEngine
      const hooks = yield* Hooks
      const approval = yield* Approval
      const events = yield* ToolEvents
      const { root } = yield* Workspace
      // A person answers one question at a time, even when a batch runs calls together.
      const person = yield* Semaphore.make(1)

      const ask = (
        context: CallContext,
        question: { callId: string; tool: string; args: unknown; reason: string; always?: string }
      ): Effect.Effect<ApprovalAnswer> =>
        Semaphore.withPermit(
          person,
          context.approve !== undefined
            ? Effect.map(
                context.approve({ tool: question.tool, args: question.args, reason: question.reason }),
                (yes): ApprovalAnswer => (yes ? { answer: "once" } : { answer: "deny" })
              )
            : approval.ask({ sessionId: context.sessionId, ...question })
        )

      /** A result for a call that did not run: refused by a rule, a profile, a hook or a person. */
      const refuse = (
        sessionId: string,
        call: ToolCall,
        tool: Tool,
        args: unknown,
        message: string,
        metadata: Record<string, unknown>,
        status: ToolStatus = "denied"
      ): Effect.Effect<ToolResult> =>
        Effect.gen(function* () {
          const tag = status === "denied" ? "PermissionDenied" : "InvalidArguments"
          const result: ToolResult = {
            id: call.id,
            tool: tool.id,
            status,
            title: `${tool.id}: ${tag}`,
            modelOutput: message,
            uiOutput: message,
            outputChars: 0,
            outputLines: 0,
            truncated: false,
            metadata,
            error: { tag, message },
            attempts: 0,
            durationMs: 0
          }
          if (!events.listening()) return result
          const base = { sessionId, callId: call.id, tool: tool.id }
          yield* events.publish({ type: "tool_start", ...base, args, paths: [], operations: tool.operations })
          const { uiOutput: _ui, ...withoutUi } = result
          yield* events.publish({ type: "tool_complete", ...base, result: withoutUi })
          return result
        })

      const make = (chain: ReadonlyArray<Policy>): DispatcherShape => {
        // (Effects chained, not a generator: every call passes through here. The hooks and the
        // person's approval, which most calls never meet, keep theirs.)
        const dispatch = (call: ToolCall, context: CallContext): Effect.Effect<ToolResult> =>
          Effect.clockWith((clock) => {
            const started = clock.currentTimeMillisUnsafe()
            const tool = registry.lookup(call.name)
            const raw = parseRaw(call.args)
            // Unknown tools and arguments that do not decode get the orchestrator's own error result.
            if (tool === undefined || !isRecord(raw)) return orchestrator.execute(call, context)
            // Decoded once here; the orchestrator is handed the result (with what was coerced).
            const decodeArgs = (input: Record<string, unknown>) => {
              const repaired = coerceArgs(tool.inputSchema, input)
              return Result.map(
                tool.decode(repaired.value),
                (args): DecodedCall => ({ tool, args, coerced: repaired.paths })
              )
            }
            const first = decodeArgs(raw)
            if (Result.isFailure(first)) return orchestrator.execute(call, context)

            const ctx: ToolContext = {
              sessionId: context.sessionId,
              callId: call.id,
              root,
              canSeeImages: context.canSeeImages ?? false,
              emit: () => Effect.void
            }
            let decoded = first.success
            let input: Record<string, unknown> = raw
            // A bug in the engine must not run the call: fail closed.
            const decide = (a: unknown) =>
              engine.decide({ tool, args: a, ctx }, chain).pipe(
                Effect.catchDefect((defect) =>
                  Effect.succeed<Decision>({
                    behavior: "deny",
                    by: "error",
                    policy: "project",
                    reason: `The permission check failed (${String(defect)}), so the call was not run. This is a bug in freecode-tools, not in your call.`
                  })
                )
              )
            // Set by the first decision, below; hooks, a person and the tool's own check may change it.
            let decision!: Decision
            const outcomes: Array<HookOutcome> = []
            const notes: Array<string> = []
            const meta = () => ({
              permission: permissionMetadata(decision),
              ...(outcomes.length > 0 ? { hooks: outcomes } : {})
            })
            const refused = (message: string, status: ToolStatus = "denied") =>
              Effect.map(refuse(context.sessionId, call, tool, input, message, meta(), status), (r) => ({
                ...r,
                durationMs: clock.currentTimeMillisUnsafe() - started
              }))

            /** PreToolUse hooks, then the person's approval when the call asks: a refusal ends the call. */
            const gateAndAsk: Effect.Effect<ToolResult | undefined> = Effect.gen(function* () {
              if (hooks.has("PreToolUse", tool.id)) {
                const pre = yield* hooks.pre({
                  session_id: context.sessionId,
                  cwd: root,
                  tool_name: tool.id,
                  tool_input: input,
                  tool_use_id: call.id
                })
                outcomes.push(...pre.outcomes)
                notes.push(...pre.context)
                if (pre.decision === "deny") {
                  decision = {
                    ...decision,
                    behavior: "deny",
                    by: "hook",
                    reason: `A PreToolUse hook blocked this call: ${pre.reason ?? "no reason given"}`
                  }
                  return yield* refused(decision.reason)
                }
                if (pre.updatedInput !== undefined) {
                  // The rewritten input must pass the rules too: a hook cannot route around a deny.
                  input = pre.updatedInput
                  const again = decodeArgs(input)
                  if (Result.isFailure(again)) {
                    return yield* refused(
                      `A PreToolUse hook rewrote the input into invalid arguments: ${again.failure.message}`,
                      "error"
                    )
                  }
                  decoded = again.success
                  decision = yield* decide(decoded.args)
                  if (decision.behavior === "deny") return yield* refused(decision.reason)
                }
                if (pre.decision === "ask" && decision.behavior === "allow") {
                  decision = {
                    ...decision,
                    behavior: "ask",
                    by: "hook",
                    reason: pre.reason ?? "A PreToolUse hook asks for approval."
                  }
                } else if (pre.decision === "allow" && decision.behavior === "ask" && decision.by !== "rule") {
                  // A hook may vouch for a call the declaration would ask about, never past a configured ask rule.
                  decision = {
                    ...decision,
                    behavior: "allow",
                    by: "hook",
                    reason: pre.reason ?? "A PreToolUse hook allowed this call."
                  }
                }
              }

              if (decision.behavior === "ask") {
                const always = decision.by === "rule" ? undefined : decision.grant?.display
                const answer = yield* ask(context, {
                  callId: call.id,
                  tool: tool.id,
                  args: decoded.args,
                  reason: decision.reason,
                  ...(always === undefined ? {} : { always })
                })
                if (answer.answer === "deny") {
                  // Refused for want of a person: what asked (rule, declaration, hook) stays the decider.
                  decision = { ...decision, behavior: "deny", ...(answer.unattended === true ? {} : { by: "person" }) }
                  return yield* refused(
                    answer.message ??
                      `The person declined this ${tool.id} call (${decision.reason}) Do not retry it unchanged; ask what they want instead.`
                  )
                }
                if (answer.answer === "always" && always !== undefined && decision.grant !== undefined) {
                  yield* engine.grant(context.sessionId, decision.grant)
                }
                decision = {
                  ...decision,
                  behavior: "allow",
                  by: "person",
                  reason: `Approved by the person (${answer.answer}).`
                }
              }
              return undefined
            })

            /** The call itself, then PostToolUse hooks. */
            const runIt: Effect.Effect<ToolResult> = Effect.suspend(() => {
              // The tool's own check asks through here: a call already settled is not asked twice.
              // With nobody to ask, the orchestrator is given no approver, and refuses such a call
              // saying that no one is available (not that a person declined).
              let declined: string | undefined
              let personSaidNo = false
              const approve = (request: ApprovalRequest): Effect.Effect<boolean> =>
                settled(decision)
                  ? Effect.succeed(true)
                  : Effect.map(
                      ask(context, { callId: call.id, tool: request.tool, args: request.args, reason: request.reason }),
                      (a) => {
                        if (a.answer === "deny") {
                          declined = a.message
                          personSaidNo = a.unattended !== true
                        }
                        return a.answer !== "deny"
                      }
                    )
              const unattended = context.approve === undefined && approval.unattended === true && !settled(decision)
              // A search shows only what the caller's rules would let it read; a person who approved
              // this call (a search of a .env-like file asks) has let it read the secrets.
              const rules = engine.searchable(tool, chain)
              const approved = decision.by === "person" || decision.by === "session"
              const searchable: Searchability = approved ? (abs) => rules(abs, false) : rules
              const searching = { ...context, searchable }
              // (Unattended implies the caller gave no approver either: `searching` has none.)
              return Effect.flatMap(
                orchestrator.execute(
                  { ...call, args: input },
                  unattended ? searching : { ...searching, approve },
                  decoded
                ),
                (result) => {
                  // The tool's own check refused it: the metadata says so, as the refusal's decider.
                  if (result.status === "denied" && result.error?.tag === "PermissionDenied") {
                    decision = {
                      ...decision,
                      behavior: "deny",
                      by: personSaidNo ? "person" : "declaration",
                      reason: result.error.message
                    }
                  }

                  const finish = (feedback: ReadonlyArray<string>): ToolResult => {
                    const extra = [...notes, ...feedback]
                    const output =
                      result.status === "denied" && declined !== undefined
                        ? `${result.modelOutput}\n${declined}`
                        : result.modelOutput
                    const modelOutput =
                      extra.length === 0 ? output : [output, ...extra.map((t) => `[hook] ${t}`)].join("\n\n")
                    return { ...result, modelOutput, metadata: { ...result.metadata, ...meta() } }
                  }
                  if (!hooks.has("PostToolUse", tool.id)) return Effect.succeed(finish([]))
                  return Effect.map(
                    hooks.post({
                      session_id: context.sessionId,
                      cwd: root,
                      tool_name: tool.id,
                      tool_input: input,
                      tool_use_id: call.id,
                      tool_response: { status: result.status, output: result.modelOutput, metadata: result.metadata }
                    }),
                    (post) => {
                      outcomes.push(...post.outcomes)
                      return finish(post.feedback)
                    }
                  )
                }
              )
            })

            return Effect.flatMap(decide(decoded.args), (decided) => {
              decision = decided
              if (decision.behavior === "deny") return refused(decision.reason)
              if (!hooks.has("PreToolUse", tool.id) && decision.behavior !== "ask") return runIt
              return Effect.flatMap(gateAndAsk, (refusal) => (refusal === undefined ? runIt : Effect.succeed(refusal)))
            })
          })

        const dispatchBatch = (calls: ReadonlyArray<ToolCall>, context: CallContext) =>
          Effect.flatMap(registry.tools, (tools) =>
            runInBatches(calls, declaredConcurrencySafe(tools), (call) => dispatch(call, context))
          )

        // A narrowed dispatcher runs its calls as the CurrentDispatcher, so an `agent` call made
        // through it starts its child from these rules, never from the wider system's.
        const asCurrent = <A>(effect: Effect.Effect<A>): Effect.Effect<A> =>
          chain.length === 0 ? effect : Effect.provideService(effect, CurrentDispatcher, shape)
        const shape: DispatcherShape = {
          dispatch: (call, context) => asCurrent(dispatch(call, context)),
          dispatchBatch: (calls, context) => asCurrent(dispatchBatch(calls, context)),
          withProfile: (profile) =>
            Effect.map(typeof profile === "string" ? engine.profile(profile) : Effect.succeed(profile), (p) =>
              make([...chain, p])
            ),
          tools: Effect.map(registry.tools, (all) => all.filter((t) => chain.every((p) => p.tools(t))))
        }
        return shape
      }

      return Dispatcher.of(make([]))
    })
  )
}
