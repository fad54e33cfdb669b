/**
 * 2026-era approvals across two replicas in one process (two tool systems on one store, each
 * serving HTTP), on node:sqlite (no notifications: the holder finds a handed-over answer by
 * looking) and on PostgreSQL: a call that has not started runs once on the replica its retry
 * reached; a program waiting on a nested approval is continued by the replica holding it.
 */
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { Effect, Layer } from "effect"
import { describe, expect, it } from "vitest"
import { testToolSystem } from "../../layers/test.ts"
import { serveHttp } from "../../src/mcp/transports.ts"
import { Approval } from "../../src/permission/approval.ts"
import { approvalFromPrompter } from "../../src/permission/approval-prompter.ts"
import { mcpPrompter } from "../../src/prompt/mcp-elicitation.ts"
import { approvalTools, COUNT_LOG } from "../fixtures/mcp/approval-tools.ts"
import { useEngines } from "../support/engines.ts"
import { type Answer, modernToolCall } from "./modern-call.ts"

const engines = useEngines()
const TOKEN = "held-across-token-0123456789abcdef"

const rpc = (url: string, name: string, args: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
  modernToolCall(url, TOKEN, "held-across", name, args, extra)

const askedIn = (answer: Answer) => {
  const result = answer.result as Record<string, unknown> | undefined
  expect(result?.resultType, JSON.stringify(answer).slice(0, 600)).toBe("input_required")
  const [key] = Object.keys(result!.inputRequests as Record<string, unknown>)
  return {
    requestState: result!.requestState as string,
    inputResponses: { [key!]: { action: "accept", content: { q1: "Yes, this once" } } }
  }
}
const textOf = (answer: Answer) =>
  (((answer.result as { content?: Array<{ text?: string }> } | undefined)?.content ?? []) as Array<{ text?: string }>)
    .map((c) => c.text ?? "")
    .join("\n")

describe.each(engines)("2026-era approvals across two in-process replicas ($name)", (engine) => {
  it("a call runs once on the replica its retry reached; a waiting program is continued by its holder", async () => {
    const root = NodeFs.realpathSync(NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "freecode-held-across-")))
    const location = engine.fresh()
    const store = location.engine === "postgres" ? location.url : location.file
    const counted = () => {
      const file = NodePath.join(root, COUNT_LOG)
      return NodeFs.existsSync(file) ? NodeFs.readFileSync(file, "utf8") : ""
    }
    try {
      await Effect.runPromise(
        Effect.scoped(
          Effect.gen(function* () {
            const replica = Effect.gen(function* () {
              const system = yield* Layer.build(
                testToolSystem({
                  root,
                  store: { store },
                  tools: [...approvalTools],
                  code: { limits: { wallMs: 120_000 } },
                  approval: Layer.succeed(Approval, approvalFromPrompter(mcpPrompter(() => undefined)))
                })
              )
              const serving = yield* serveHttp(system, 0, {
                auth: { kind: "token", token: TOKEN },
                // The store's key is used: this folder stays empty.
                modern: { stateDir: NodePath.join(root, ".unused-state") }
              })
              return serving.url
            })
            const a = yield* replica
            const b = yield* replica

            const asked = askedIn(yield* Effect.promise(() => rpc(a, "count", { n: 3 })))
            const done = yield* Effect.promise(() => rpc(b, "count", { n: 3 }, asked))
            expect(textOf(done), JSON.stringify(done).slice(0, 600)).toContain("counted 3")
            expect(counted()).toBe("3\n")
            const replayed = yield* Effect.promise(() => rpc(a, "count", { n: 3 }, asked))
            expect((replayed.error as { data?: { problem?: string } } | undefined)?.data?.problem).toBe("replayed")

            const program = 'await tools.count({ n: 4 }); return "after"'
            const waiting = askedIn(yield* Effect.promise(() => rpc(a, "code", { program })))
            const resumed = yield* Effect.promise(() => rpc(b, "code", { program }, waiting))
            expect(textOf(resumed), JSON.stringify(resumed).slice(0, 600)).toContain("after")
            expect(counted()).toBe("3\n4\n")
            expect(NodeFs.existsSync(NodePath.join(root, ".unused-state"))).toBe(false)
          })
        )
      )
    } finally {
      NodeFs.rmSync(root, { recursive: true, force: true })
    }
  }, 120_000)
})
