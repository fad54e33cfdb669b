/** The Dispatcher: permission → hooks → Approval → orchestrator → hooks, on real files. */
import * as NodeFs from "node:fs"
import { afterAll, describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { Dispatcher } from "../../src/dispatch/dispatcher.ts"
import type { ApprovalQuestion } from "../../src/permission/approval.ts"
import { concurrency, makeRoot, system } from "./helpers.ts"

const project = makeRoot()
afterAll(project.cleanup)
const { root } = project
const exists = (rel: string) => NodeFs.existsSync(`${root}/${rel}`)
const ctx = { sessionId: "s" }

describe("Dispatcher", () => {
  it.live("a deny rule refuses before anyone is asked; the decision is in the metadata", () => {
    const asked: Array<ApprovalQuestion> = []
    return Effect.gen(function* () {
      const d = yield* Dispatcher
      const r = yield* d.dispatch({ id: "1", name: "touch", args: { filePath: "denied.txt" } }, ctx)
      expect(r.status).toBe("denied")
      expect(r.modelOutput).toContain("Touch(denied.txt) denies")
      expect(r.metadata.permission).toMatchObject({ behavior: "deny", by: "rule", rule: "Touch(denied.txt)" })
      expect(exists("denied.txt")).toBe(false)
      expect(asked).toEqual([])
    }).pipe(
      Effect.provide(
        system({ root, config: { permissions: { deny: ["Touch(denied.txt)"] } }, answer: { answer: "once" }, asked })
      )
    )
  })

  it.live("a mutating call asks once; 'always' saves the rule for the session, and only that rule", () => {
    const asked: Array<ApprovalQuestion> = []
    return Effect.gen(function* () {
      const d = yield* Dispatcher
      const a = yield* d.dispatch({ id: "a1", name: "touch", args: { filePath: "a.txt" } }, ctx)
      expect(a.status).toBe("ok")
      expect(a.metadata.permission).toMatchObject({ behavior: "allow", by: "person" })
      expect(asked).toHaveLength(1)
      expect(asked[0]).toMatchObject({ tool: "touch", callId: "a1", sessionId: "s" })
      expect(asked[0]!.always).toBe(`touch(${root}/a.txt)`)
      const again = yield* d.dispatch({ id: "a2", name: "touch", args: { filePath: "a.txt" } }, ctx)
      expect(again.status).toBe("ok")
      expect(again.metadata.permission).toMatchObject({ by: "session" })
      expect(asked).toHaveLength(1)
      yield* d.dispatch({ id: "a3", name: "touch", args: { filePath: "b.txt" } }, ctx)
      expect(asked).toHaveLength(2)
      yield* d.dispatch({ id: "a4", name: "touch", args: { filePath: "a.txt" } }, { sessionId: "other" })
      expect(asked).toHaveLength(3)
    }).pipe(Effect.provide(system({ root, answer: { answer: "always" }, asked })))
  })

  it.live("a person's no reaches the model with their message; the tool does not run", () =>
    Effect.gen(function* () {
      const d = yield* Dispatcher
      const r = yield* d.dispatch({ id: "n", name: "touch", args: { filePath: "no.txt" } }, ctx)
      expect(r.status).toBe("denied")
      expect(r.modelOutput).toBe("Use the staging directory instead.")
      expect(r.metadata.permission).toMatchObject({ behavior: "deny", by: "person" })
      expect(exists("no.txt")).toBe(false)
    }).pipe(Effect.provide(system({ root, answer: { answer: "deny", message: "Use the staging directory instead." } })))
  )

  it.live("with nobody to ask, the call is refused as the declaration asked, not as a person's no", () =>
    Effect.gen(function* () {
      const d = yield* Dispatcher
      const r = yield* d.dispatch({ id: "u", name: "touch", args: { filePath: "unattended.txt" } }, ctx)
      expect(r.status).toBe("denied")
      expect(r.modelOutput).toContain("No one is available to approve it here")
      expect(r.metadata.permission).toMatchObject({ behavior: "deny", by: "declaration" })
      expect(exists("unattended.txt")).toBe(false)
    }).pipe(Effect.provide(system({ root })))
  )

  it.live("a tool's own ask with nobody there says no one is available, and the metadata says denied", () =>
    Effect.gen(function* () {
      const d = yield* Dispatcher
      const r = yield* d.dispatch({ id: "c1", name: "careful", args: { what: "risky" } }, ctx)
      expect(r.status).toBe("denied")
      expect(r.modelOutput).toContain("careful: risky needs a person. No one is available to approve it here")
      expect(r.modelOutput).not.toContain("declined")
      expect(r.metadata.permission).toMatchObject({ behavior: "deny", by: "declaration" })
    }).pipe(Effect.provide(system({ root })))
  )

  it.live("a tool's own ask that the person refuses says they declined", () =>
    Effect.gen(function* () {
      const d = yield* Dispatcher
      const r = yield* d.dispatch({ id: "c2", name: "careful", args: { what: "risky" } }, ctx)
      expect(r.status).toBe("denied")
      expect(r.modelOutput).toContain("The person declined this careful call")
      expect(r.modelOutput).toContain("Not now.")
      expect(r.metadata.permission).toMatchObject({ behavior: "deny", by: "person" })
    }).pipe(Effect.provide(system({ root, answer: { answer: "deny", message: "Not now." } })))
  )

  it.live("requiresApproval is asked once per call, not again by the orchestrator", () => {
    const asked: Array<ApprovalQuestion> = []
    return Effect.gen(function* () {
      const d = yield* Dispatcher
      const r = yield* d.dispatch({ id: "g", name: "guarded", args: {} }, ctx)
      expect(r.status).toBe("ok")
      expect(asked).toHaveLength(1)
      expect(asked[0]!.reason).toContain("guarded requires approval")
    }).pipe(Effect.provide(system({ root, answer: { answer: "once" }, asked })))
  })

  it.live("a tool's own checkPermissions ask goes through the same Approval", () => {
    const asked: Array<ApprovalQuestion> = []
    return Effect.gen(function* () {
      const d = yield* Dispatcher
      expect((yield* d.dispatch({ id: "c1", name: "careful", args: { what: "plain" } }, ctx)).status).toBe("ok")
      expect(asked).toHaveLength(0)
      const r = yield* d.dispatch({ id: "c2", name: "careful", args: { what: "risky" } }, ctx)
      expect(r.status).toBe("denied")
      expect(asked).toHaveLength(1)
      expect(asked[0]!.reason).toBe("careful: risky needs a person.")
      expect(r.modelOutput).toContain("not today")
    }).pipe(Effect.provide(system({ root, answer: { answer: "deny", message: "not today" }, asked })))
  })

  it.live("a configured ask rule asks even for a read-only tool, and offers no 'always'", () => {
    const asked: Array<ApprovalQuestion> = []
    return Effect.gen(function* () {
      const d = yield* Dispatcher
      expect((yield* d.dispatch({ id: "l", name: "look", args: { n: 1 } }, ctx)).status).toBe("ok")
      expect(asked).toHaveLength(1)
      expect(asked[0]!.always).toBeUndefined()
    }).pipe(
      Effect.provide(system({ root, config: { permissions: { ask: ["look"] } }, answer: { answer: "always" }, asked }))
    )
  })

  it.live("without an Approval layer, an ask is refused with the reason (non-interactive)", () =>
    Effect.gen(function* () {
      const d = yield* Dispatcher
      const r = yield* d.dispatch({ id: "x", name: "touch", args: { filePath: "x.txt" } }, ctx)
      expect(r.status).toBe("denied")
      expect(r.modelOutput).toContain("touch changes things")
      expect(r.modelOutput).toContain("No one is available to approve it here")
    }).pipe(Effect.provide(system({ root })))
  )

  it.live("batches: checks per call, concurrency-safe calls still run together, results in call order", () =>
    Effect.gen(function* () {
      const d = yield* Dispatcher
      concurrency.max = 0
      const results = yield* d.dispatchBatch(
        [
          { id: "1", name: "look", args: { n: 1 } },
          { id: "2", name: "look", args: { n: 2 } },
          { id: "3", name: "look", args: { n: 3 } },
          { id: "4", name: "touch", args: { filePath: "batch-denied.txt" } },
          { id: "5", name: "look", args: { n: 5 } }
        ],
        ctx
      )
      expect(results.map((r) => [r.id, r.status])).toEqual([
        ["1", "ok"],
        ["2", "ok"],
        ["3", "ok"],
        ["4", "denied"],
        ["5", "ok"]
      ])
      expect(concurrency.max).toBe(3)
      for (const r of results) expect(r.metadata.permission).toBeDefined()
    }).pipe(Effect.provide(system({ root, config: { permissions: { deny: ["touch"] } } })))
  )

  it.live("a sub-agent's dispatcher (withProfile) is narrower and sees fewer tools", () =>
    Effect.gen(function* () {
      const parent = yield* Dispatcher
      const child = yield* parent.withProfile("read-only")
      expect((yield* child.tools).map((t) => t.id).sort()).toEqual(["careful", "look"])
      const r = yield* child.dispatch({ id: "p", name: "touch", args: { filePath: "child.txt" } }, ctx)
      expect(r.status).toBe("denied")
      expect(r.modelOutput).toContain("not available to this agent (profile read-only)")
      expect(exists("child.txt")).toBe(false)
      expect((yield* child.dispatch({ id: "q", name: "look", args: { n: 1 } }, ctx)).status).toBe("ok")
      const e = yield* Effect.flip(parent.withProfile("nope"))
      expect(e.message).toContain('No profile named "nope"')
    }).pipe(Effect.provide(system({ root, answer: { answer: "once" } })))
  )

  it.live("unknown tools and bad arguments get the orchestrator's own error results", () =>
    Effect.gen(function* () {
      const d = yield* Dispatcher
      const unknown = yield* d.dispatch({ id: "u", name: "tuch", args: {} }, ctx)
      expect(unknown).toMatchObject({ status: "error", error: { tag: "UnknownTool" } })
      const bad = yield* d.dispatch({ id: "b", name: "touch", args: { file: 1 } }, ctx)
      expect(bad).toMatchObject({ status: "error", error: { tag: "InvalidArguments" } })
    }).pipe(Effect.provide(system({ root })))
  )
})
