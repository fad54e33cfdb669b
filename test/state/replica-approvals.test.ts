/**
 * 2026-era approvals across two real `mcp --http --store postgres://…` replicas behind a
 * round-robin proxy, one PostgreSQL cluster for the file: a call that needs approval, retried on
 * the other replica, runs exactly once, and its state replayed on either is refused; a code-mode
 * program waiting on a nested approval, retried on the other replica, resumes on the one that
 * holds it without running anything again; and when that one was killed, the retry gets the
 * typed lost-replica error, and nothing after the approval ran, while a plain call it had asked
 * about runs on the other.
 */
import type { ChildProcess } from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startHttp } from "../mcp/helpers.ts"
import { type PgCluster, removePostgres, startPostgres } from "../support/postgres.ts"
import { type RoundRobin, startRoundRobin } from "../support/round-robin.ts"
import { type Answer, modernToolCall } from "./modern-call.ts"

// The real `mcp` command on a system with `count` (asks every time, appends to count.log) and
// the `code` tool.
const SERVE = NodePath.resolve(import.meta.dirname, "../fixtures/mcp/serve-approvals.ts")
const TOKEN = "replica-approvals-token-0123456789abcdef"
// Long enough that a replica stalled by a loaded machine is not fenced; short enough that a
// killed one is fenced within the test's bound.
process.env.FREECODE_STORE_LEASE_MS = "10000"
process.env.FREECODE_FIXTURE_CODE = "1"

let pg: PgCluster
let base: string
let root: string
let proxy: RoundRobin
const replicas: Array<{ child: ChildProcess; stderr: () => string }> = []

beforeAll(async () => {
  pg = await startPostgres()
  base = NodeFs.realpathSync(NodeFs.mkdtempSync("/tmp/freecode-replica-approvals-"))
  root = NodePath.join(base, "project")
  NodeFs.mkdirSync(root)
  const tokenFile = NodePath.join(base, "token")
  NodeFs.writeFileSync(tokenFile, `${TOKEN}\n`, { mode: 0o600 })
  const start = () =>
    startHttp(SERVE, ["mcp", "--http", "0", "--root", root, "--store", pg.url, "--token-file", tokenFile])
  const [a, b] = await Promise.all([start(), start()])
  replicas.push(a, b)
  proxy = await startRoundRobin([a, b].map((r) => Number(new URL(r.url).port)))
}, 180_000)

afterAll(async () => {
  await proxy?.close()
  for (const r of replicas) r.child.kill("SIGKILL")
  if (pg !== undefined) removePostgres(pg)
  if (base !== undefined) NodeFs.rmSync(base, { recursive: true, force: true })
})

/** One 2026-era tools/call through the proxy, on replica `on`. */
const call = async (on: number, name: string, args: Record<string, unknown>, extra: Record<string, unknown> = {}) => {
  proxy.aim(on)
  const before = proxy.log.length
  const answer = await modernToolCall(proxy.url, TOKEN, "replica-approvals", name, args, extra)
  const routed = proxy.log.slice(before).find((r) => r.rpc === "tools/call")
  expect(routed?.replica, "the proxy sent the call where the test aimed it").toBe(on)
  return answer
}

const askedIn = (answer: Answer) => {
  const result = answer.result as Record<string, unknown> | undefined
  expect(result?.resultType, JSON.stringify(answer).slice(0, 600)).toBe("input_required")
  const [key] = Object.keys(result!.inputRequests as Record<string, unknown>)
  return { key: key!, requestState: result!.requestState as string }
}
const yes = (key: string) => ({ [key]: { action: "accept", content: { q1: "Yes, this once" } } })
const retry = (asked: { key: string; requestState: string }) => ({
  requestState: asked.requestState,
  inputResponses: yes(asked.key)
})
const textOf = (answer: Answer) =>
  (((answer.result as { content?: Array<{ text?: string }> } | undefined)?.content ?? []) as Array<{ text?: string }>)
    .map((c) => c.text ?? "")
    .join("\n")
const errorOf = (answer: Answer) => {
  const error = answer.error as { code: number; message: string; data?: { problem?: string } } | undefined
  expect(error, JSON.stringify(answer).slice(0, 600)).toBeDefined()
  return { code: error!.code, message: error!.message, problem: error!.data?.problem }
}
const counted = () => {
  const file = NodePath.join(root, "count.log")
  return NodeFs.existsSync(file) ? NodeFs.readFileSync(file, "utf8") : ""
}
const clearCount = () => NodeFs.rmSync(NodePath.join(root, "count.log"), { force: true })

describe("2026-era approvals across two replicas", () => {
  it("a call asked on one replica and retried on the other runs once there; its state replayed on either is refused", async () => {
    clearCount()
    const asked = askedIn(await call(0, "count", { n: 7 }))
    expect(counted()).toBe("")
    const done = await call(1, "count", { n: 7 }, retry(asked))
    expect(textOf(done), JSON.stringify(done).slice(0, 600)).toContain("counted 7")
    expect(counted()).toBe("7\n")
    for (const on of [0, 1]) {
      const again = errorOf(await call(on, "count", { n: 7 }, retry(asked)))
      expect(again.problem).toBe("replayed")
    }
    // Neither the first replica's held copy nor the replays counted again.
    expect(counted()).toBe("7\n")
  }, 120_000)

  it("a program waiting on a nested approval, retried on the other replica, resumes where it waits: nothing runs twice", async () => {
    clearCount()
    const program = 'await tools.count({ n: 1 }); await tools.count({ n: 2 }); return "both"'
    const first = askedIn(await call(0, "code", { program }))
    expect(counted()).toBe("")
    // Answered on replica 1: handed to replica 0, which holds the program; its next question comes back.
    const second = askedIn(await call(1, "code", { program }, retry(first)))
    expect(second.key).not.toBe(first.key)
    expect(counted()).toBe("1\n")
    const done = await call(1, "code", { program }, retry(second))
    expect(textOf(done), JSON.stringify(done).slice(0, 600)).toContain("both")
    expect(counted()).toBe("1\n2\n")
    const replayed = errorOf(await call(0, "code", { program }, retry(second)))
    expect(replayed.problem).toBe("replayed")
    expect(counted()).toBe("1\n2\n")
  }, 120_000)

  it("the replica holding a waiting program killed: the retry on the other gets the lost-replica error, and nothing after the approval ran; a plain call still runs", async () => {
    clearCount()
    const program = 'await tools.count({ n: 9 }); return "ran"'
    const asked = askedIn(await call(0, "code", { program }))
    // A plain call asked on the same replica needs nothing of it: it runs wherever its retry lands.
    const plain = askedIn(await call(0, "count", { n: 5 }))
    replicas[0]!.child.kill("SIGKILL")
    // The other replica fences the killed one once its lease runs out; the retry waits for that.
    const lost = errorOf(await call(1, "code", { program }, retry(asked)))
    expect(lost.problem).toBe("replica-lost")
    expect(lost.message).toContain("nothing after the approval ran")
    expect(counted()).toBe("")
    const ran = await call(1, "count", { n: 5 }, retry(plain))
    expect(textOf(ran), JSON.stringify(ran).slice(0, 600)).toContain("counted 5")
    expect(counted()).toBe("5\n")
  }, 120_000)
})
