/** Saved ("always") approvals live in the session database: a resumed session is not asked again. */
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { afterAll, describe, expect, it } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import { testToolSystem } from "../../layers/test.ts"
import { Dispatcher } from "../../src/dispatch/dispatcher.ts"
import { Approval, type ApprovalAnswer, type ApprovalQuestion } from "../../src/permission/approval.ts"
import { makeStateDir } from "./helpers.ts"

const state = makeStateDir()
const root = NodeFs.realpathSync(NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "freecode-grants-")))
afterAll(() => {
  state.cleanup()
  NodeFs.rmSync(root, { recursive: true, force: true })
})

/** One "process": a persistent tool system whose person answers `answer`; runs one bash call. */
// `expr` is not on the read-only list, so the command asks (echo would run without asking).
const bashIn = (sessionId: string, answer: ApprovalAnswer, asked: Array<ApprovalQuestion>) =>
  Effect.scoped(
    Effect.gen(function* () {
      const context = yield* Layer.build(
        testToolSystem({
          root,
          config: {},
          sessions: { stateDir: state.dir },
          approval: Approval.layerTest(answer, asked)
        })
      )
      return yield* Context.get(context, Dispatcher).dispatch(
        { id: `c-${Math.random()}`, name: "bash", args: { command: "expr saved" } },
        { sessionId }
      )
    })
  )

describe("saved approvals in the session database", () => {
  it.live(
    "an always answer outlives the tool system that saved it, for that session and command only",
    () =>
      Effect.gen(function* () {
        const first: Array<ApprovalQuestion> = []
        const approved = yield* bashIn("resume-me", { answer: "always" }, first)
        expect(approved.status).toBe("ok")
        expect(first).toHaveLength(1)
        expect(first[0]!.always).toBe("bash(expr saved)")

        // A new system on the same database, whose person would refuse: the session is not asked.
        const later: Array<ApprovalQuestion> = []
        const resumed = yield* bashIn("resume-me", { answer: "deny", message: "no" }, later)
        expect(resumed.status).toBe("ok")
        expect(resumed.modelOutput).toContain("saved")
        expect(later).toEqual([])

        // Another session has no such approval.
        const other = yield* bashIn("someone-else", { answer: "deny", message: "no" }, later)
        expect(other.status).toBe("denied")
        expect(later).toHaveLength(1)
      }),
    120_000
  )
})
