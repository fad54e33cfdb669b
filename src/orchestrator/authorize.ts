/**
 * authorize: the one place a call is allowed, asked or refused. In order:
 *
 *   the permission engine (rules, mode, profile, what the call touches)
 *   → PreToolUse hooks (block, ask, allow, or rewrite the input — decoded and decided again)
 *   → the person (Approval), when the answer is "ask"
 *   → the tool's own validateInput, checkPermissions and requiresApproval (a call a rule, a
 *     mode, a saved approval, a hook or the person already allowed is not asked twice).
 *
 * Each step takes the call's gate state (the invocation, the decision so far, hook outcomes)
 * and returns the next one or a refusal; nothing is reconciled afterwards. Every route has all
 * four: the ungated one (an Orchestrator used on its own) has the allow-all engine, no hooks and
 * nobody to ask, so only the tool's own checks can refuse, asking `context.approve`.
 */
import { Effect, Result, Semaphore } from "effect"
import type { HookOutcome, Hooks } from "../hooks/hooks.ts"
import { hidesNothing, NO_POLICY } from "../permission/allow-all.ts"
import type { Approval, ApprovalAnswer, ApprovalQuestion } from "../permission/approval.ts"
import type { Decision, PermissionEngineShape, Policy } from "../permission/engine.ts"
import { InputRound } from "../prompt/input-round.ts"
import { InvalidArguments, PermissionDenied, type ToolError } from "../tool/errors.ts"
import type { Searchability, ToolContext } from "../tool/tool.ts"
import type { CallContext } from "./context.ts"
import { guard, stateProblem } from "./defect.ts"
import { decodeInput, type Invocation } from "./prepare.ts"

/** What authorize consults: every route has each (the ungated one, values that let everything by). */
export interface Gates {
  readonly root: string
  readonly engine: PermissionEngineShape
  /** The profiles the call runs under, narrowing the project's policy. */
  readonly chain: ReadonlyArray<Policy>
  readonly hooks: Hooks["Service"]
  /** Asked when the caller brings no approver (`context.approve`). */
  readonly approval: Approval["Service"]
  /** A person answers one question at a time, even when a batch runs calls together. */
  readonly person: Semaphore.Semaphore
}

/** What the gates found so far. */
export interface GateState {
  readonly invocation: Invocation
  /** The engine's decision as hooks and the person changed it; undefined before the rules ran. */
  readonly decision: Decision | undefined
  readonly outcomes: ReadonlyArray<HookOutcome>
  /** Context PreToolUse hooks added for the model. */
  readonly notes: ReadonlyArray<string>
}

export type Verdict =
  | { readonly _tag: "Allowed"; readonly state: GateState; readonly ctx: ToolContext }
  | { readonly _tag: "Refused"; readonly state: GateState; readonly error: ToolError }

type Step = Effect.Effect<GateState | Verdict>

const refused = (state: GateState, error: ToolError): Verdict => ({ _tag: "Refused", state, error })
const denied = (state: GateState, decision: Decision | undefined, message: string): Verdict =>
  refused({ ...state, decision }, new PermissionDenied({ tool: state.invocation.tool.id, message }))
const isVerdict = (s: GateState | Verdict): s is Verdict => "_tag" in s

/** Who may stand in for a person's yes: a rule, the mode, a saved approval, a hook, or the person. */
const settled = (d: Decision | undefined) => d !== undefined && d.behavior === "allow" && d.by !== "declaration"

const NOBODY = "No one is available to approve it here; do the task another way, or ask the person to allow it."

/** The Approval of a route with no one behind it (the ungated one): every question is refused, saying why. */
export const nobodyToAsk: Approval["Service"] = {
  ask: (q) => Effect.succeed({ answer: "deny", unattended: true, message: `${q.reason} ${NOBODY}` })
}

/**
 * Asks the caller's approver, else the system's Approval, one question at a time. Not a call
 * held for a 2026-era MCP client (an InputRound): its question goes back in its result and the
 * client asks its person, so a call whose client never retries must not hold up the others.
 */
const ask = Effect.fnUntraced(function* (
  gates: Gates,
  context: CallContext,
  q: ApprovalQuestion
): Effect.fn.Return<ApprovalAnswer> {
  const asking = askAnyone(gates, context, q)
  return yield* (yield* InputRound) === undefined ? Semaphore.withPermit(gates.person, asking) : asking
})

const askAnyone = (gates: Gates, context: CallContext, q: ApprovalQuestion): Effect.Effect<ApprovalAnswer> =>
  context.approve !== undefined
    ? Effect.map(
        context.approve({ tool: q.tool, args: q.args, reason: q.reason }),
        (yes): ApprovalAnswer => (yes ? { answer: "once" } : { answer: "deny" })
      )
    : gates.approval.ask(q)

/** The engine's answer; a bug in the engine must not run the call: fail closed. */
const decide = (gates: Gates, inv: Invocation) =>
  gates.engine.decide({ tool: inv.tool, args: inv.args, ctx: inv.scope, paths: inv.paths }, gates.chain).pipe(
    Effect.catchDefect((defect) =>
      Effect.succeed<Decision>({
        behavior: "deny",
        by: "error",
        policy: "project",
        reason: (() => {
          const state = stateProblem(defect)
          return state !== undefined
            ? `The permission check could not read saved approvals, so the call was not run: ${state}`
            : `The permission check failed (${String(defect)}), so the call was not run. This is a bug in freecode-tools, not in your call.`
        })()
      })
    )
  )

/** Step 1: the rules. */
const byRules =
  (gates: Gates) =>
  (state: GateState): Step =>
    Effect.map(decide(gates, state.invocation), ruled(state))

const ruled =
  (state: GateState) =>
  (decision: Decision): GateState | Verdict =>
    decision.behavior === "deny" ? denied(state, decision, decision.reason) : { ...state, decision }

/** Step 2: PreToolUse hooks. A rewritten input is decoded and decided again: a hook cannot route around a deny. */
const byHooks =
  (gates: Gates, context: CallContext) =>
  (state: GateState): Step => {
    const hooks = gates.hooks
    const { invocation: inv } = state
    if (!hooks.has("PreToolUse", inv.tool.id)) return Effect.succeed(state)
    return Effect.gen(function* () {
      const pre = yield* hooks.pre({
        session_id: context.sessionId,
        cwd: gates.root,
        tool_name: inv.tool.id,
        tool_input: inv.input,
        tool_use_id: inv.call.id,
        ...(context.parentCallId === undefined ? {} : { parent_tool_use_id: context.parentCallId })
      })
      let next: GateState = {
        ...state,
        outcomes: [...state.outcomes, ...pre.outcomes],
        notes: [...state.notes, ...pre.context]
      }
      const decision = next.decision
      if (pre.decision === "deny") {
        const reason = `A PreToolUse hook blocked this call: ${pre.reason ?? "no reason given"}`
        return denied(
          next,
          decision === undefined ? undefined : { ...decision, behavior: "deny", by: "hook", reason },
          reason
        )
      }
      if (pre.updatedInput !== undefined) {
        const again = decodeInput(inv.call, inv.tool, pre.updatedInput, inv.scope, inv.via)
        if (Result.isFailure(again)) {
          if (again.failure._tag === "ToolFailure") return refused(next, again.failure)
          const message = `A PreToolUse hook rewrote the input into invalid arguments: ${again.failure.message}`
          return refused(next, new InvalidArguments({ tool: inv.tool.id, issues: again.failure.issues, message }))
        }
        const decided = yield* byRules(gates)({ ...next, invocation: again.success })
        if (isVerdict(decided)) return decided
        next = decided
      }
      const d = next.decision
      if (d === undefined) return next
      if (pre.decision === "ask" && d.behavior === "allow") {
        const reason = pre.reason ?? "A PreToolUse hook asks for approval."
        const asked: GateState = { ...next, decision: { ...d, behavior: "ask", by: "hook", reason } }
        return asked
      }
      // A hook may vouch for a call the declaration would ask about, never past a configured ask rule.
      if (pre.decision === "allow" && d.behavior === "ask" && d.by !== "rule") {
        const reason = pre.reason ?? "A PreToolUse hook allowed this call."
        const vouched: GateState = { ...next, decision: { ...d, behavior: "allow", by: "hook", reason } }
        return vouched
      }
      return next
    }).pipe(Effect.withSpan("authorize.hooks"))
  }

/** Step 3: the person, when the rules (or a hook) ask. */
const byPerson =
  (gates: Gates, context: CallContext) =>
  (state: GateState): Step => {
    const d = state.decision
    if (d === undefined || d.behavior !== "ask") return Effect.succeed(state)
    const { invocation: inv } = state
    const always = d.by === "rule" ? undefined : d.grant?.display
    return Effect.gen(function* () {
      const answer = yield* ask(gates, context, {
        sessionId: context.sessionId,
        callId: inv.call.id,
        tool: inv.tool.id,
        args: inv.args,
        reason: d.reason,
        ...(always === undefined ? {} : { always })
      })
      if (answer.answer === "deny") {
        // Refused for want of a person: what asked (rule, declaration, hook) stays the decider.
        const decision: Decision = { ...d, behavior: "deny", ...(answer.unattended === true ? {} : { by: "person" }) }
        return denied(
          state,
          decision,
          answer.message ??
            `The person declined this ${inv.tool.id} call (${d.reason}) Do not retry it unchanged; ask what they want instead.`
        )
      }
      if (answer.answer === "always" && always !== undefined && d.grant !== undefined) {
        yield* gates.engine.grant(context.sessionId, d.grant)
      }
      const decision: Decision = {
        ...d,
        behavior: "allow",
        by: "person",
        reason: `Approved by the person (${answer.answer}).`
      }
      return { ...state, decision }
    }).pipe(Effect.withSpan("authorize.person"))
  }

/**
 * What a search by this call may show: the caller's rules, narrowed by what the caller says
 * (`context.searchable`); a person who approved the call let it read secrets. Rules that hide
 * nothing (the allow-all engine's) are not consulted per file.
 */
const searchability = (gates: Gates, state: GateState, context: CallContext): Searchability | undefined => {
  const rules = gates.engine.searchable(state.invocation.tool, gates.chain)
  const caller = context.searchable
  if (hidesNothing(rules)) return caller
  const by = state.decision?.by
  const own: Searchability = by === "person" || by === "session" ? (abs) => rules(abs, false) : rules
  return caller === undefined
    ? own
    : (abs, secrets) => {
        const verdict = own(abs, secrets)
        return verdict === "ok" ? caller(abs, secrets) : verdict
      }
}

/** Step 4: the tool's own checks, with the context it will run in. */
const byTool =
  (gates: Gates, context: CallContext, toolContext: (searchable: Searchability | undefined) => ToolContext) =>
  (state: GateState): Effect.Effect<Verdict> => {
    const { tool, args } = state.invocation
    const made = toolContext(searchability(gates, state, context))
    const checked = state.decision?.checked
    const ctx = checked === undefined ? made : { ...made, checked }
    const allowed: Verdict = { _tag: "Allowed", state, ctx }
    const validate = tool.validateInput
    const check = tool.checkPermissions
    if (validate === undefined && check === undefined && !tool.requiresApproval) return Effect.succeed(allowed)
    const own = Effect.gen(function* () {
      if (validate !== undefined) yield* validate(args, ctx)
      const verdict = check === undefined ? undefined : yield* check(args, ctx)
      const decision = state.decision
      if (verdict?.behavior === "deny") {
        const message = verdict.reason ?? `${tool.id} refused this call.`
        return denied(state, decision && { ...decision, behavior: "deny", by: "declaration", reason: message }, message)
      }
      if ((verdict?.behavior !== "ask" && !tool.requiresApproval) || settled(decision)) return allowed
      const reason = verdict?.reason ?? `${tool.id} requires approval for every call.`
      const answer = yield* ask(gates, context, {
        sessionId: context.sessionId,
        callId: state.invocation.call.id,
        tool: tool.id,
        args,
        reason
      })
      if (answer.answer !== "deny") return allowed
      // Nobody was there to ask: the tool's declaration stays the decider, and the answer says why.
      const declined = `The person declined this ${tool.id} call. Do not retry it unchanged; ask what they want instead.`
      const message =
        answer.unattended === true
          ? (answer.message ?? `${reason} ${NOBODY}`)
          : answer.message === undefined
            ? declined
            : `${declined}\n${answer.message}`
      const by = answer.unattended === true ? "declaration" : "person"
      return denied(state, decision && { ...decision, behavior: "deny", by, reason: message }, message)
    })
    return Effect.catch(guard(tool.id, own), (error) => Effect.succeed(refused(state, error)))
  }

/** Allowed (with the context the tool runs in) or refused (with why), for one invocation. */
export const authorize = (
  gates: Gates,
  invocation: Invocation,
  context: CallContext,
  toolContext: (searchable: Searchability | undefined) => ToolContext
): Effect.Effect<Verdict> => {
  const start: GateState = { invocation, decision: undefined, outcomes: [], notes: [] }
  const tool = byTool(gates, context, toolContext)
  // Most calls meet no hook and no person: the rules' answer, then the tool's own checks.
  // (Chained by hand: every call passes through here.)
  const person = (s: GateState | Verdict): Effect.Effect<Verdict> =>
    isVerdict(s)
      ? Effect.succeed(s)
      : s.decision?.behavior === "ask"
        ? Effect.flatMap(byPerson(gates, context)(s), toTool)
        : tool(s)
  const toTool = (s: GateState | Verdict): Effect.Effect<Verdict> => (isVerdict(s) ? Effect.succeed(s) : tool(s))
  const hooked = (s: GateState | Verdict): Effect.Effect<Verdict> =>
    isVerdict(s)
      ? Effect.succeed(s)
      : gates.hooks.has("PreToolUse", invocation.tool.id)
        ? Effect.flatMap(byHooks(gates, context)(s), person)
        : person(s)
  // (The rules' answer goes straight on: one step fewer on every call.)
  const rules = ruled(start)
  return Effect.flatMap(decide(gates, invocation), (decision) => hooked(rules(decision)))
}

/** What a decision puts in a result's metadata. */
export interface PermissionMetadata {
  readonly behavior: Decision["behavior"]
  readonly by: Decision["by"]
  readonly reason: string
  readonly policy: string
  readonly rule?: string
}

/** The decision a result reports: one a policy made (the allow-all engine's says nothing). */
export const reported = (state: GateState): Decision | undefined => {
  const d = state.decision
  return d === undefined || d.policy === NO_POLICY ? undefined : d
}

/** The gates' part of a result's metadata: the decision and the hook outcomes. */
export const gateMetadata = (state: GateState): Record<string, unknown> => {
  const d = reported(state)
  return {
    ...(d === undefined
      ? {}
      : {
          permission: {
            behavior: d.behavior,
            by: d.by,
            reason: d.reason,
            policy: d.policy,
            ...(d.rule === undefined ? {} : { rule: d.rule })
          } satisfies PermissionMetadata
        }),
    ...(state.outcomes.length > 0 ? { hooks: state.outcomes } : {})
  }
}
