/**
 * `mcp --http` sessions end, with everything they held: clients that go away without DELETE
 * leave no session and no per-session state once idle; DELETE and idleness both stop the
 * session's background jobs (no process left); a job of one MCP session is invisible to another;
 * a request on an ended session gets 404 so the client initializes again. Asserted on the owner's
 * counts and on the processes, with a short idle limit.
 */
import { execFileSync } from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { Context, Effect, Layer } from "effect"
import { testToolSystem } from "../../layers/test.ts"
import { serveHttp } from "../../src/mcp/transports.ts"
import { Sessions } from "../../src/session/sessions.ts"
import { BashTool } from "../../src/tools/bash.ts"
import { JobTool } from "../../src/tools/job.ts"
import { LsTool } from "../../src/tools/ls.ts"

const root = NodeFs.realpathSync(NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "freecode-http-sessions-")))
NodeFs.writeFileSync(NodePath.join(root, "notes.txt"), "alpha\n")

/** Where the server is, and the header that lets a request in. */
interface Target {
  readonly url: URL
  readonly authorization: string
}

/** The tool system served over HTTP, with sessions ending after `idleMs` unused. */
const served = (idleMs: number) =>
  Effect.gen(function* () {
    const system = yield* Layer.build(
      testToolSystem({
        root,
        tools: [BashTool, JobTool, LsTool],
        config: { permissions: { defaultMode: "bypassPermissions" } }
      }).pipe(Layer.provide(Sessions.layerWith({ idleMs, maxSessions: 200 })))
    )
    const serving = yield* serveHttp(system, 0)
    if (serving.auth.kind !== "token") throw new Error("serveHttp serves with a token by default")
    const url: Target = { url: new URL(serving.url), authorization: `Bearer ${serving.auth.token}` }
    return { url, sessions: Context.get(system, Sessions) }
  })

const connect = (url: Target) =>
  Effect.promise(async () => {
    const client = new Client({ name: "test", version: "1.0.0" })
    const transport = new StreamableHTTPClientTransport(url.url, {
      requestInit: { headers: { authorization: url.authorization } }
    })
    await client.connect(transport)
    return { client, transport, id: transport.sessionId! }
  })

const text = (result: unknown): string =>
  ((result as { content: Array<{ type: string; text?: string }> }).content ?? []).map((c) => c.text ?? "").join("")

const call = (client: Client, name: string, args: Record<string, unknown>) =>
  Effect.promise(() => client.callTool({ name, arguments: args }).then(text))

/** Polls `done` (bounded): what is waited for is a state, never a duration. */
const until = (done: () => boolean) =>
  Effect.gen(function* () {
    for (let i = 0; i < 600 && !done(); i++) yield* Effect.sleep("50 millis")
    return done()
  })

const running = (pattern: string): boolean => {
  try {
    return execFileSync("pgrep", ["-f", pattern], { encoding: "utf8" }).trim() !== ""
  } catch {
    return false
  }
}

/** One JSON-RPC message POSTed as a bare client would (no GET stream, nothing else open). */
const post = (url: Target, message: object, sessionId?: string) =>
  Effect.promise(() =>
    fetch(url.url, {
      method: "POST",
      headers: {
        authorization: url.authorization,
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        "mcp-protocol-version": "2025-06-18",
        ...(sessionId === undefined ? {} : { "mcp-session-id": sessionId })
      },
      body: JSON.stringify({ jsonrpc: "2.0", ...message })
    }).then(async (r) => ({ status: r.status, body: await r.text(), id: r.headers.get("mcp-session-id") ?? "" }))
  )

/** A request on a session id, as a client that does not know it ended would send it. */
const listWith = (url: Target, sessionId: string) => post(url, { id: 1, method: "tools/list" }, sessionId)

describe("mcp --http sessions", () => {
  it.live(
    "50 clients that never send DELETE leave no session and no per-session state after the idle time",
    () =>
      Effect.gen(function* () {
        const { url, sessions } = yield* served(1_000)
        const ids: Array<string> = []
        for (let i = 0; i < 50; i++) {
          const { client, id } = yield* connect(url)
          ids.push(id)
          expect(yield* call(client, "ls", {})).toContain("notes.txt")
          expect(sessions.has(id)).toBe(true)
          expect(sessions.counts().mcpHttp).toBeGreaterThan(0)
          expect(sessions.counts().outputs).toBeGreaterThan(0)
          // Gone without a goodbye: its connections close, no DELETE is sent.
          yield* Effect.promise(() => client.close())
        }
        expect(new Set(ids).size).toBe(50)
        expect(yield* until(() => sessions.size() === 0)).toBe(true)
        yield* sessions.settled
        const counts = sessions.counts()
        expect(Object.entries(counts).filter(([, n]) => n !== 0)).toEqual([])
        expect(counts.mcpHttp).toBe(0)
        const late = yield* listWith(url, ids[0]!)
        expect(late.status).toBe(404)
        expect(late.body).toContain("Session not found")
      }).pipe(Effect.scoped),
    60_000
  )

  it.live(
    "a call that runs past the idle time keeps its session; idleness counts from the last request's end",
    () =>
      Effect.gen(function* () {
        const { url, sessions } = yield* served(500)
        const init = yield* post(url, {
          id: 0,
          method: "initialize",
          params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "bare", version: "1" } }
        })
        expect(init.status).toBe(200)
        expect((yield* post(url, { method: "notifications/initialized" }, init.id)).status).toBe(202)
        // Four idle limits long, with no other request and no stream open meanwhile.
        const slow = yield* post(
          url,
          { id: 1, method: "tools/call", params: { name: "bash", arguments: { command: "sleep 2; echo slept" } } },
          init.id
        )
        expect(slow.status).toBe(200)
        expect(slow.body).toContain("slept")
        expect(sessions.has(init.id)).toBe(true)
        expect(yield* until(() => !sessions.has(init.id))).toBe(true)
        expect((yield* listWith(url, init.id)).status).toBe(404)
      }).pipe(Effect.scoped),
    60_000
  )

  it.live(
    "a job is its session's alone, and DELETE or idleness stops it",
    () =>
      Effect.gen(function* () {
        const { url, sessions } = yield* served(1_000)
        const a = yield* connect(url)
        const b = yield* connect(url)
        // A connected client (its GET stream open) is in use, however long it says nothing.
        yield* Effect.sleep("2500 millis")
        expect(sessions.has(a.id) && sessions.has(b.id)).toBe(true)
        const tagA = `sleep 301.${process.pid}1`
        const started = yield* call(a.client, "bash", { command: `${tagA}; echo done`, run_in_background: true })
        const jobId = /job-\d+/.exec(started)?.[0]
        expect(jobId, started).toBeDefined()
        expect(yield* until(() => running(tagA))).toBe(true)
        // Session b cannot see, read or stop session a's job.
        expect(yield* call(b.client, "job", { id: jobId })).toContain(`No job "${jobId}" in this session`)
        expect(yield* call(b.client, "job", { id: jobId, stop: true })).toContain("No job")
        expect(running(tagA)).toBe(true)
        expect(yield* call(a.client, "job", { id: jobId })).toContain("running")

        // DELETE ends the session at once: its job is stopped, and the id answers 404.
        yield* Effect.promise(() => a.transport.terminateSession())
        expect(yield* until(() => !running(tagA))).toBe(true)
        expect(sessions.has(a.id)).toBe(false)
        expect((yield* listWith(url, a.id)).status).toBe(404)
        yield* Effect.promise(() => a.client.close())

        // Idle: b starts a job and goes away without DELETE; the job goes with the session.
        const tagB = `sleep 301.${process.pid}2`
        expect(yield* call(b.client, "bash", { command: `${tagB}; echo done`, run_in_background: true })).toContain(
          "job-"
        )
        expect(yield* until(() => running(tagB))).toBe(true)
        yield* Effect.promise(() => b.client.close())
        expect(yield* until(() => sessions.size() === 0)).toBe(true)
        yield* sessions.settled
        expect(running(tagB)).toBe(false)
        expect(sessions.counts().jobs).toBe(0)
      }).pipe(Effect.scoped),
    60_000
  )
})
