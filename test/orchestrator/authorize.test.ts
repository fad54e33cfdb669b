/** authorize on its own: the gates in order, each able to refuse, the person asked at most once. */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Result, Schema, Semaphore } from "effect"
import type { Hooks, PreResult } from "../../src/hooks/hooks.ts"
import { hooksOf } from "../../src/hooks/hooks.ts"
import { authorize, type Gates, gateMetadata, nobodyToAsk } from "../../src/orchestrator/authorize.ts"
import type { CallContext } from "../../src/orchestrator/context.ts"
import { type Catalog, prepare } from "../../src/orchestrator/prepare.ts"
import { allowAllEngine } from "../../src/permission/allow-all.ts"
import type { Approval, ApprovalQuestion } from "../../src/permission/approval.ts"
import type { Decision, PermissionEngineShape } from "../../src/permission/engine.ts"
import { defineTool, invalidArguments, type Tool, type ToolContext } from "../../src/tool/tool.ts"

const ASKER = { sessionId: "s", root: "/" }

const Write = defineTool({
  id: "write_it",
  description: "Writes.",
  parameters: Schema.Struct({ path: Schema.String }),
  mutates: true,
  checkPermissions: ({ path }) =>
    Effect.succeed(
      path === "risky"
        ? { behavior: "ask" as const, reason: "risky needs a person." }
        : path === "never"
          ? { behavior: "deny" as const, reason: "never is refused." }
          : { behavior: "allow" as const }
    ),
  validateInput: ({ path }) =>
    path === ""
      ? Effect.fail(invalidArguments("write_it", [{ path: "path", message: "must not be empty" }]))
      : Effect.void,
  execute: () => Effect.succeed({ title: "w", output: "wrote" })
})

const catalog: Catalog = {
  find: (n) => (n === Write.id ? Write : undefined),
  names: () => [Write.id],
  strictNulls: false
}
const invocation = (path: string) => {
  const r = prepare(catalog, { id: "c", name: "write_it", args: { path } }, ASKER)
  if (Result.isFailure(r)) throw new Error(r.failure.error.message)
  return r.success
}

const ctxFor = (searchable: unknown): ToolContext => ({
  sessionId: "s",
  callId: "c",
  root: "/",
  canSeeImages: false,
  emit: () => Effect.void,
  ...(searchable === undefined ? {} : { searchable: searchable as never })
})

/** An engine that answers `behavior` for every call and records each decision asked of it. */
const engineAnswering = (behavior: Decision["behavior"], by: Decision["by"] = "rule", seen: Array<unknown> = []) =>
  ({
    decide: (req) =>
      Effect.sync(() => {
        seen.push(req.args)
        return { behavior, by, reason: `engine says ${behavior}`, policy: "project" }
      }),
    grant: () => Effect.void,
    profile: () => Effect.die("unused"),
    makeProfile: () => Effect.die("unused"),
    mode: "default",
    searchable: () => () => "ok",
    alwaysRefused: () => undefined,
    project: { name: "project", mode: "default", allow: [], ask: [], deny: [], tools: () => true }
  }) satisfies PermissionEngineShape

const approvalAnswering = (answer: "once" | "deny", asked: Array<ApprovalQuestion>): Approval["Service"] => ({
  ask: (q) =>
    Effect.sync(() => {
      asked.push(q)
      return { answer }
    })
})

const hooksReturning = (pre: Partial<PreResult>): Hooks["Service"] =>
  ({
    has: (event: string) => event === "PreToolUse",
    pre: () =>
      Effect.succeed({
        decision: undefined,
        reason: undefined,
        updatedInput: undefined,
        context: [],
        outcomes: [],
        ...pre
      }),
    post: () => Effect.die("unused")
  }) as unknown as Hooks["Service"]

const gates = (over: Partial<Gates>) =>
  Effect.map(
    Semaphore.make(1),
    (person): Gates => ({
      root: "/",
      engine: allowAllEngine,
      chain: [],
      hooks: hooksOf([]),
      approval: nobodyToAsk,
      person,
      ...over
    })
  )

const context: CallContext = { sessionId: "s" }

describe("authorize", () => {
  it.effect(
    "with the allow-all engine, no hooks and nobody to ask, only the tool's own checks refuse, asking the caller's approver",
    () =>
      Effect.gen(function* () {
        const g = yield* gates({})
        const plain = yield* authorize(g, invocation("ok"), context, ctxFor)
        expect(plain._tag).toBe("Allowed")
        expect(gateMetadata(plain.state)).toEqual({})
        const nobody = yield* authorize(g, invocation("risky"), context, ctxFor)
        expect(nobody._tag === "Refused" && nobody.error.message).toContain("No one is available")
        const yes = yield* authorize(
          g,
          invocation("risky"),
          { sessionId: "s", approve: () => Effect.succeed(true) },
          ctxFor
        )
        expect(yes._tag).toBe("Allowed")
        const deny = yield* authorize(g, invocation("never"), context, ctxFor)
        expect(deny._tag === "Refused" && deny.error).toMatchObject({
          _tag: "PermissionDenied",
          message: "never is refused."
        })
      })
  )

  it.effect("a deny rule refuses before any hook or person; the decision is the metadata", () =>
    Effect.gen(function* () {
      const asked: Array<ApprovalQuestion> = []
      const g = yield* gates({ engine: engineAnswering("deny"), approval: approvalAnswering("once", asked) })
      const v = yield* authorize(g, invocation("risky"), context, ctxFor)
      expect(v._tag).toBe("Refused")
      expect(asked).toEqual([])
      expect(gateMetadata(v.state)).toMatchObject({ permission: { behavior: "deny", by: "rule" } })
    })
  )

  it.effect("a person who said yes to the rules' question is not asked again by the tool's own check", () =>
    Effect.gen(function* () {
      const asked: Array<ApprovalQuestion> = []
      const g = yield* gates({ engine: engineAnswering("ask"), approval: approvalAnswering("once", asked) })
      const v = yield* authorize(g, invocation("risky"), context, ctxFor)
      expect(v._tag).toBe("Allowed")
      expect(asked.map((q) => q.reason)).toEqual(["engine says ask"])
      expect(gateMetadata(v.state)).toMatchObject({ permission: { behavior: "allow", by: "person" } })
    })
  )

  it.effect("a read the declaration allowed still asks when the tool's own check asks; a no is the person's", () =>
    Effect.gen(function* () {
      const asked: Array<ApprovalQuestion> = []
      const g = yield* gates({
        engine: engineAnswering("allow", "declaration"),
        approval: approvalAnswering("deny", asked)
      })
      const v = yield* authorize(g, invocation("risky"), context, ctxFor)
      expect(v._tag === "Refused" && v.error.message).toContain("declined")
      expect(asked.map((q) => q.reason)).toEqual(["risky needs a person."])
      expect(gateMetadata(v.state)).toMatchObject({ permission: { behavior: "deny", by: "person" } })
    })
  )

  it.effect("a hook's rewritten input is decoded and decided again; an invalid one is refused as such", () =>
    Effect.gen(function* () {
      const seen: Array<unknown> = []
      const g = yield* gates({
        engine: engineAnswering("allow", "rule", seen),
        hooks: hooksReturning({ updatedInput: { path: "other" } })
      })
      const v = yield* authorize(g, invocation("ok"), context, ctxFor)
      expect(v._tag).toBe("Allowed")
      expect(v.state.invocation.args).toEqual({ path: "other" })
      expect(seen).toEqual([{ path: "ok" }, { path: "other" }])
      const bad = yield* authorize(
        yield* gates({
          engine: engineAnswering("allow"),
          hooks: hooksReturning({ updatedInput: { path: 1 } as never })
        }),
        invocation("ok"),
        context,
        ctxFor
      )
      expect(bad._tag === "Refused" && bad.error).toMatchObject({ _tag: "InvalidArguments" })
      expect(bad._tag === "Refused" && bad.error.message).toContain("rewrote the input into invalid arguments")
    })
  )

  it.effect("a hook may ask about a call the rules allowed, and block one outright", () =>
    Effect.gen(function* () {
      const asked: Array<ApprovalQuestion> = []
      const g = yield* gates({
        engine: engineAnswering("allow"),
        hooks: hooksReturning({ decision: "ask", reason: "hook wants a person" }),
        approval: approvalAnswering("deny", asked)
      })
      const v = yield* authorize(g, invocation("ok"), context, ctxFor)
      expect(v._tag).toBe("Refused")
      expect(asked.map((q) => q.reason)).toEqual(["hook wants a person"])
      const blocked = yield* authorize(
        yield* gates({ engine: engineAnswering("allow"), hooks: hooksReturning({ decision: "deny", reason: "no" }) }),
        invocation("ok"),
        context,
        ctxFor
      )
      expect(blocked._tag === "Refused" && blocked.error.message).toBe("A PreToolUse hook blocked this call: no")
      expect(gateMetadata(blocked.state)).toMatchObject({ permission: { behavior: "deny", by: "hook" } })
    })
  )

  it.effect("validateInput refuses before the tool's own check asks anyone", () =>
    Effect.gen(function* () {
      const asked: Array<ApprovalQuestion> = []
      const g = yield* gates({
        engine: engineAnswering("allow", "declaration"),
        approval: approvalAnswering("once", asked)
      })
      const v = yield* authorize(g, invocation(""), context, ctxFor)
      expect(v._tag === "Refused" && v.error).toMatchObject({ _tag: "InvalidArguments" })
      expect(asked).toEqual([])
    })
  )

  it.effect("a tool whose own check throws is refused with a ToolFailure, never a defect", () =>
    Effect.gen(function* () {
      const Throws: Tool = { ...Write, checkPermissions: () => Effect.die(new Error("boom")) }
      const inv = { ...invocation("ok"), tool: Throws }
      const v = yield* authorize(yield* gates({}), inv, context, ctxFor)
      expect(v._tag === "Refused" && v.error).toMatchObject({ _tag: "ToolFailure" })
      expect(v._tag === "Refused" && v.error.message).toContain("boom")
    })
  )
})
