/**
 * Two real `mcp --http --store postgres://…` processes behind a round-robin proxy on loopback,
 * one PostgreSQL cluster for the file: calls alternate replicas; outputs, read records, grants
 * and todos hold across them; a replica killed mid-call, a replica paused past its lease, the
 * listening connection killed, and the database stopped, each with what the client sees.
 */
import type { ChildProcess } from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { Client as ModernClient, StreamableHTTPClientTransport as ModernTransport } from "@modelcontextprotocol/client"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { Context, Effect, Exit, Layer, Scope } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { testToolSystem } from "../../layers/test.ts"
import { modernSessionIdFor } from "../../src/mcp/session-move.ts"
import { PermissionEngine } from "../../src/permission/engine.ts"
import { DEDUP_POINTER } from "../../src/read-state/read-state.ts"
import { GrantStore } from "../../src/session/grants.ts"
import { TodoStore } from "../../src/session/todos.ts"
import { startHttp, withToken } from "../mcp/helpers.ts"
import { type PgCluster, removePostgres, startPostgres } from "../support/postgres.ts"
import { type RoundRobin, startRoundRobin } from "../support/round-robin.ts"

const MAIN = NodePath.resolve(import.meta.dirname, "../../src/cli/main.ts")
const TOKEN = "replicas-test-token-0123456789abcdef"
const SESSION = modernSessionIdFor({ kind: "token", token: TOKEN })
// Leases of 20 s: on a loaded machine a replica's event loop can stall for seconds while it loads
// a tool's code; past its lease it would be fenced (and exit), which these tests do not want
// except where they pause one on purpose.
const LEASE_MS = 20_000
process.env.FREECODE_STORE_LEASE_MS = String(LEASE_MS)
// `mcp` leaves read de-duplication off unless asked (a client may drop results); asked here.
process.env.FREECODE_READ_DEDUP = "1"

let pg: PgCluster
let base: string
let root: string
let tokenFile: string
let proxy: RoundRobin
const replicas: Array<{ child: ChildProcess; stderr: () => string }> = []
let scope: Scope.Closeable
/** A third replica in this process, as a library embedder runs one: grants and todos through it. */
let library: Context.Context<GrantStore | PermissionEngine | TodoStore>

const startReplica = async () => {
  const r = await startHttp(MAIN, ["mcp", "--http", "0", "--root", root, "--store", pg.url, "--token-file", tokenFile])
  return { r, port: Number(new URL(r.url).port) }
}

beforeAll(async () => {
  pg = await startPostgres()
  base = NodeFs.realpathSync(NodeFs.mkdtempSync("/tmp/freecode-replica-procs-"))
  root = NodePath.join(base, "project")
  NodeFs.mkdirSync(root)
  NodeFs.writeFileSync(
    NodePath.join(root, "big.txt"),
    Array.from({ length: 3000 }, (_, i) => `line ${i + 1}`).join("\n")
  )
  NodeFs.writeFileSync(NodePath.join(root, "small.txt"), "alpha\nbeta\n")
  NodeFs.writeFileSync(NodePath.join(base, "outside.txt"), "outside the project\n")
  tokenFile = NodePath.join(base, "token")
  NodeFs.writeFileSync(tokenFile, `${TOKEN}\n`, { mode: 0o600 })
  const [a, b] = await Promise.all([startReplica(), startReplica()])
  replicas.push(a.r, b.r)
  proxy = await startRoundRobin([a.port, b.port])
  scope = Effect.runSync(Scope.make())
  library = (await Effect.runPromise(
    Scope.provide(Layer.build(testToolSystem({ root, store: { store: pg.url } })), scope)
  )) as unknown as Context.Context<GrantStore | PermissionEngine | TodoStore>
}, 180_000)

let closing = false
afterAll(async () => {
  closing = true
  await proxy?.close()
  for (const r of replicas) r.child.kill("SIGKILL")
  if (scope !== undefined) await Effect.runPromise(Scope.close(scope, Exit.void))
  if (pg !== undefined) removePostgres(pg)
  if (base !== undefined) NodeFs.rmSync(base, { recursive: true, force: true })
})

/** One value from the cluster, as psql prints it. */
const query = (sql: string) => pg.psql(sql).trim()

type Text = { type: string; text?: string }
const textOf = (result: unknown) =>
  (((result as { content?: unknown }).content ?? []) as Array<Text>).map((c) => c.text ?? "").join("\n")

const modern = async () => {
  const client = new ModernClient(
    { name: "replicas-test", version: "1.0.0" },
    { versionNegotiation: { mode: { pin: "2026-07-28" } } }
  )
  try {
    await client.connect(new ModernTransport(new URL(proxy.url), withToken(TOKEN)))
  } catch (e) {
    console.log(
      "CONNECT",
      proxy.failures,
      replicas.map((r) => [r.child.exitCode, r.stderr()])
    )
    throw e
  }
  return client
}

/** One tools/call through the proxy; `on`: the replica it must reach (else the next in turn). */
const call = async (client: ModernClient, name: string, args: Record<string, unknown>, on?: number) => {
  if (on !== undefined) proxy.aim(on)
  const before = proxy.log.length
  const result = await client.callTool({ name, arguments: args })
  const routed = proxy.log.slice(before).find((r) => r.rpc === "tools/call" && r.tool === name)
  return { text: textOf(result), isError: result.isError === true, replica: routed?.replica }
}

const grantOutside = () => {
  const real = NodePath.join(base, "outside.txt")
  return Effect.runPromise(
    Context.get(library, PermissionEngine).grant(SESSION, {
      tool: "read",
      key: `paths:${real}`,
      display: `read(${real})`
    })
  )
}
const revokeOutside = () =>
  Effect.runPromise(
    Context.get(library, GrantStore).revoke!(SESSION, `read\u0000paths:${NodePath.join(base, "outside.txt")}`)
  )

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

/** Waits (bounded) until `ok()` holds. */
const waitFor = async (what: string, ok: () => boolean, ms = 60_000) => {
  for (const end = Date.now() + ms; !ok(); ) {
    if (Date.now() > end) throw new Error(`never: ${what}`)
    await sleep(50)
  }
}

/** Starts a new replica in slot `i` (after one was killed), behind the proxy. */
const replace = async (i: number) => {
  const fresh = await startReplica()
  // A test that ran past its bound replaces a replica after the file's end: stop it too.
  if (closing) return void fresh.r.child.kill("SIGKILL")
  replicas[i] = fresh.r
  proxy.ports[i] = fresh.port
}

const exited = (child: ChildProcess) =>
  new Promise<number | null>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve(child.exitCode)
    child.once("exit", (code) => resolve(code))
  })

/** Calls until `done` holds for the answer (bounded), through the proxy. */
const until = async (
  attempt: () => Promise<{ text: string; isError: boolean }>,
  done: (r: { text: string; isError: boolean }) => boolean,
  tries = 100
) => {
  let last = await attempt()
  for (let i = 0; i < tries && !done(last); i++) {
    await new Promise((r) => setTimeout(r, 100))
    last = await attempt()
  }
  return last
}

describe("two mcp --http replicas behind a round-robin proxy", () => {
  it("calls alternate replicas with no error", async () => {
    const client = await modern()
    try {
      const before = proxy.log.length
      for (let i = 0; i < 10; i++) {
        const r = await call(client, i % 2 === 0 ? "ls" : "read", i % 2 === 0 ? {} : { filePath: "small.txt" })
        expect(r.isError).toBe(false)
      }
      const order = proxy.log.slice(before).map((r) => r.replica)
      expect(order.length).toBeGreaterThanOrEqual(10)
      for (let i = 1; i < order.length; i++) expect(order[i]).not.toBe(order[i - 1])
      expect(proxy.failures).toEqual([])
    } finally {
      await client.close()
    }
  }, 120_000)

  it("outputs, read records, grants and todos hold across them", async () => {
    const client = await modern()
    try {
      // An output stored through one replica (its model copy is cut) is read through the other.
      const big = await call(client, "bash", { command: "seq 1 300000" })
      expect(big.isError).toBe(false)
      const id = big.text.match(/output \{"id": "([^"]+)"/)?.[1]
      expect(id).toBeDefined()
      const back = await call(client, "output", { id, pattern: "^250000$" }, 1 - big.replica!)
      expect(back.isError).toBe(false)
      expect(back.text).toContain("250000")
      expect(back.replica).not.toBe(big.replica)

      // Read de-duplication: the same lines read again through the other replica point back.
      NodeFs.writeFileSync(NodePath.join(root, "dedup.txt"), "gamma\nbeta\n")
      const first = await call(client, "read", { filePath: "dedup.txt" })
      const again = await call(client, "read", { filePath: "dedup.txt" }, 1 - first.replica!)
      expect(first.text).toContain("beta")
      expect(again.replica).not.toBe(first.replica)
      expect(again.text).toContain(DEDUP_POINTER)

      // The stale-write check: read through one, changed behind both, written through the other.
      const file = NodePath.join(root, "w.txt")
      NodeFs.writeFileSync(file, "one\n")
      const read = await call(client, "read", { filePath: "w.txt" })
      expect(read.isError).toBe(false)
      NodeFs.writeFileSync(file, "changed elsewhere\n")
      const stale = await call(client, "write", { filePath: "w.txt", content: "two\n" }, 1 - read.replica!)
      expect(stale.replica).not.toBe(read.replica)
      expect(stale.isError).toBe(true)
      expect(stale.text).toMatch(/changed|modified|since/i)
      expect(NodeFs.readFileSync(file, "utf8")).toBe("changed elsewhere\n")
      // Read again through one, written through the other: it lands.
      const reread = await call(client, "read", { filePath: "w.txt" })
      const write = await call(client, "write", { filePath: "w.txt", content: "three\n" }, 1 - reread.replica!)
      expect(write.isError).toBe(false)
      expect(NodeFs.readFileSync(file, "utf8")).toBe("three\n")

      // Todos written through a replica process are what the library's replica reads.
      const todo = await call(client, "todowrite", { todos: [{ id: "1", content: "ship it", status: "pending" }] })
      expect(todo.isError).toBe(false)
      expect(await Effect.runPromise(Context.get(library, TodoStore).get(SESSION))).toEqual([
        { id: "1", content: "ship it", status: "pending" }
      ])

      // A grant made through the library's replica holds on both processes; a revocation reaches both.
      const outside = NodePath.join(base, "outside.txt")
      const asked = await call(client, "read", { filePath: outside })
      expect(asked.isError).toBe(true)
      await grantOutside()
      const one = await call(client, "read", { filePath: outside }, 0)
      const two = await call(client, "read", { filePath: outside }, 1)
      expect([one.isError, two.isError, one.replica === two.replica]).toEqual([false, false, false])
      expect(two.text).toMatch(/outside the project|<unchanged>/)
      await revokeOutside()
      const refused = [
        await until(
          () => call(client, "read", { filePath: outside }, 0),
          (r) => r.isError
        ),
        await until(
          () => call(client, "read", { filePath: outside }, 1),
          (r) => r.isError
        )
      ]
      expect(refused.map((r) => r.isError)).toEqual([true, true])

      // Both served, and no request failed.
      expect(new Set(proxy.log.map((r) => r.replica))).toEqual(new Set([0, 1]))
      expect(proxy.failures).toEqual([])
    } finally {
      await client.close()
    }
  }, 180_000)
  it("a 2025-era session initialized on one replica continues on the other", async () => {
    const before = proxy.log.length
    const transport = new StreamableHTTPClientTransport(new URL(proxy.url), withToken(TOKEN))
    const client = new Client({ name: "legacy-test", version: "1.0.0" })
    await client.connect(transport)
    try {
      const sessionId = transport.sessionId!
      expect(sessionId).toBeDefined()
      const tools = await client.listTools()
      expect(tools.tools.map((t) => t.name)).toContain("read")
      // An output stored through one replica is read through the other, in the same session.
      proxy.aim(0)
      const big = await client.callTool({ name: "bash", arguments: { command: "seq 1 200000" } })
      const id = textOf(big).match(/output \{"id": "([^"]+)"/)?.[1]
      expect(id).toBeDefined()
      proxy.aim(1)
      const back = await client.callTool({ name: "output", arguments: { id, pattern: "^150000$" } })
      expect(back.isError).not.toBe(true)
      expect(textOf(back)).toContain("150000")
      const calls = proxy.log.slice(before).filter((r) => r.rpc === "tools/call")
      expect(calls.map((r) => r.replica)).toEqual([0, 1])
      // Both replicas served this session's requests, and none failed.
      expect(new Set(proxy.log.slice(before).map((r) => r.replica))).toEqual(new Set([0, 1]))
      expect(proxy.failures).toEqual([])
      expect(query(`SELECT era FROM fc_sessions WHERE session_id = '${sessionId}'`)).toBe("2025-11-25")
      // Ended by the client (DELETE): no replica continues it.
      await transport.terminateSession()
      expect(query(`SELECT count(*) FROM fc_sessions WHERE session_id = '${sessionId}'`)).toBe("0")
      // Asked of each replica directly: the one that did not take the DELETE hears of it too.
      for (const port of proxy.ports) {
        const list = () =>
          fetch(`http://127.0.0.1:${port}/mcp`, {
            method: "POST",
            headers: {
              authorization: `Bearer ${TOKEN}`,
              "content-type": "application/json",
              accept: "application/json, text/event-stream",
              "mcp-session-id": sessionId,
              "mcp-protocol-version": "2025-11-25"
            },
            body: JSON.stringify({ jsonrpc: "2.0", id: 9, method: "tools/list" })
          }).then(async (r) => {
            await r.text()
            return r.status
          })
        let status = await list()
        for (let i = 0; i < 100 && status !== 404; i++) {
          await sleep(100)
          status = await list()
        }
        expect(status).toBe(404)
      }
    } finally {
      await client.close().catch(() => undefined)
    }
  }, 120_000)

  it("two replicas writing one file at once for two sessions: one write lands, the other is told it is stale", async () => {
    const file = NodePath.join(root, "both.txt")
    NodeFs.writeFileSync(file, "original\n")
    // One client on each replica, each its own session.
    const clients = await Promise.all(
      [0, 1].map(async (i) => {
        const client = new Client({ name: `writer-${i}`, version: "1.0.0" })
        await client.connect(
          new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${proxy.ports[i]}/mcp`), withToken(TOKEN))
        )
        return client
      })
    )
    try {
      for (const c of clients) {
        expect(textOf(await c.callTool({ name: "read", arguments: { filePath: "both.txt" } }))).toContain("original")
      }
      const results = await Promise.all(
        clients.map((c, i) => c.callTool({ name: "write", arguments: { filePath: "both.txt", content: `by ${i}\n` } }))
      )
      const landed = results.flatMap((r, i) => (r.isError === true ? [] : [i]))
      expect(landed).toHaveLength(1)
      const refused = results[1 - landed[0]!]!
      expect(textOf(refused)).toMatch(/changed|modified|since/i)
      expect(NodeFs.readFileSync(file, "utf8")).toBe(`by ${landed[0]}\n`)
    } finally {
      await Promise.all(clients.map((c) => c.close().catch(() => undefined)))
    }
  }, 120_000)

  it("a stream resumes with Last-Event-ID on the other replica, from the events stored", async () => {
    const direct = (i: number) => `http://127.0.0.1:${proxy.ports[i]}/mcp`
    const headers = (session?: string) => ({
      authorization: `Bearer ${TOKEN}`,
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": "2025-11-25",
      ...(session === undefined ? {} : { "mcp-session-id": session })
    })
    const init = await fetch(direct(0), {
      method: "POST",
      headers: headers(),
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "raw", version: "1" } }
      })
    })
    const session = init.headers.get("mcp-session-id")!
    await init.text()
    await (
      await fetch(direct(0), {
        method: "POST",
        headers: headers(session),
        body: JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" })
      })
    ).text()
    // Reads SSE events from a response until `enough` holds (bounded), then lets it go.
    const events = async (res: Response, enough: (e: Array<{ id?: string; data: string }>) => boolean) => {
      const out: Array<{ id?: string; data: string }> = []
      const reader = res.body!.getReader()
      let text = ""
      const end = Date.now() + 30_000
      while (!enough(out) && Date.now() < end) {
        const next = await Promise.race([reader.read(), sleep(1_000).then(() => undefined)])
        if (next === undefined) continue
        if (next.done) break
        text += new TextDecoder().decode(next.value)
        let cut = text.indexOf("\n\n")
        while (cut >= 0) {
          const block = text.slice(0, cut)
          text = text.slice(cut + 2)
          const id = block.match(/^id: (.*)$/m)?.[1]
          const data = block.match(/^data: (.*)$/m)?.[1] ?? ""
          out.push(id === undefined ? { data } : { id, data })
          cut = text.indexOf("\n\n")
        }
      }
      await reader.cancel().catch(() => undefined)
      return out
    }
    // The standalone stream on the first replica: a command's live output comes as log messages.
    const stream = await fetch(direct(0), { method: "GET", headers: headers(session) })
    expect(stream.status).toBe(200)
    const call = await fetch(direct(0), {
      method: "POST",
      headers: headers(session),
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 2,
        method: "tools/call",
        params: { name: "bash", arguments: { command: "echo first-line; sleep 1; echo second-line" } }
      })
    })
    await call.text()
    const seen = await events(stream, (e) => e.some((x) => x.data.includes("second-line")))
    const first = seen.find((x) => x.data.includes("first-line"))
    expect(first?.id).toBeDefined()
    expect(seen.some((x) => x.data.includes("second-line"))).toBe(true)
    // Resumed on the other replica after the first event: the rest is replayed from the store.
    const resumed = await fetch(direct(1), {
      method: "GET",
      headers: { ...headers(session), "last-event-id": first!.id! }
    })
    expect(resumed.status).toBe(200)
    const replayed = await events(resumed, (e) => e.some((x) => x.data.includes("second-line")))
    expect(replayed.some((x) => x.data.includes("second-line"))).toBe(true)
    expect(replayed.some((x) => x.data.includes("first-line"))).toBe(false)
    // Another session's event id replays nothing of this one's.
    await fetch(direct(1), { method: "DELETE", headers: headers(session) })
  }, 120_000)

  it("kill -9 of a replica mid-call: the client's retry is answered by the other; the command ran once", async () => {
    const client = await modern()
    try {
      const ran = NodePath.join(root, "ran")
      const started = NodePath.join(root, "started")
      const command = "touch started; sleep 3; echo x >> ran"
      proxy.aim(0)
      const pending = client.callTool({ name: "bash", arguments: { command } }).then(
        (r) => ({ answered: r }),
        (e: unknown) => ({ failed: String(e) })
      )
      await waitFor("the command started", () => NodeFs.existsSync(started))
      replicas[0]!.child.kill("SIGKILL")
      const first = await pending
      expect(first).toHaveProperty("failed")
      // The client retries; the dead replica refuses the connection, so the proxy takes the other.
      NodeFs.rmSync(started)
      const retry = await call(client, "bash", { command }, 0)
      expect(retry.isError).toBe(false)
      expect(retry.replica).toBe(1)
      // Had the first command outlived its replica, it would have written its line by now.
      await sleep(4_000)
      expect(NodeFs.readFileSync(ran, "utf8")).toBe("x\n")
    } finally {
      await client.close()
      await replace(0)
    }
  }, 180_000)

  it("a replica paused past its lease is fenced when it resumes: its late write is refused, and it stops", async () => {
    const client = await modern()
    try {
      await call(client, "todowrite", { todos: [{ id: "1", content: "before the pause", status: "pending" }] }, 1)
      const paused = replicas[1]!
      paused.child.kill("SIGSTOP")
      // The other replica fences it once its lease has run out.
      await waitFor(
        "the paused replica fenced",
        () => query(`SELECT count(*) FROM fc_hosts WHERE host_id LIKE '%-${paused.child.pid}-%' AND epoch > 1`) === "1",
        LEASE_MS * 6
      )
      const now = await call(
        client,
        "todowrite",
        { todos: [{ id: "1", content: "the successor's", status: "pending" }] },
        0
      )
      expect(now.isError).toBe(false)
      // A write through the paused replica, taken up when it resumes.
      proxy.aim(1)
      const late = client
        .callTool({ name: "todowrite", arguments: { todos: [{ id: "1", content: "late", status: "pending" }] } })
        .then(
          (r) => ({ text: textOf(r), isError: r.isError === true }),
          (e: unknown) => ({ text: String(e), isError: true })
        )
      await sleep(500)
      paused.child.kill("SIGCONT")
      const answer = await late
      expect(answer.isError).toBe(true)
      expect(await exited(paused.child)).toBe(75)
      expect(paused.stderr()).toMatch(/fenced/)
      expect(await Effect.runPromise(Context.get(library, TodoStore).get(SESSION))).toEqual([
        { id: "1", content: "the successor's", status: "pending" }
      ])
    } finally {
      await client.close()
      await replace(1)
    }
  }, 240_000)

  it("the listening connections killed: a revoked grant is refused on every replica once they listen again", async () => {
    const client = await modern()
    const outside = NodePath.join(base, "outside.txt")
    const listeners = () => Number(query("SELECT count(*) FROM pg_stat_activity WHERE query ILIKE 'LISTEN%'"))
    try {
      await grantOutside()
      // Seen (and cached) by both.
      expect(
        (
          await until(
            () => call(client, "read", { filePath: outside }, 0),
            (r) => !r.isError
          )
        ).isError
      ).toBe(false)
      expect(
        (
          await until(
            () => call(client, "read", { filePath: outside }, 1),
            (r) => !r.isError
          )
        ).isError
      ).toBe(false)
      const before = listeners()
      expect(before).toBeGreaterThanOrEqual(3)
      query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query ILIKE 'LISTEN%'")
      await waitFor("every replica listening again", () => listeners() >= before)
      await revokeOutside()
      const refused = [
        await until(
          () => call(client, "read", { filePath: outside }, 0),
          (r) => r.isError,
          10
        ),
        await until(
          () => call(client, "read", { filePath: outside }, 1),
          (r) => r.isError,
          10
        )
      ]
      expect(refused.map((r) => r.isError)).toEqual([true, true])
    } finally {
      await client.close()
    }
  }, 120_000)

  it("PostgreSQL stopped longer than a lease: what needs it fails closed and says so; all back without restarts", async () => {
    const client = await modern()
    const outside = NodePath.join(base, "outside.txt")
    try {
      await grantOutside()
      const fencedBefore = query("SELECT count(*) FROM fc_hosts WHERE epoch > 1")
      pg.stop()
      try {
        for (const i of [0, 1]) {
          const todo = await call(client, "todowrite", { todos: [{ id: "1", content: "x", status: "pending" }] }, i)
          expect(todo.isError).toBe(true)
          expect(todo.text).toMatch(/shared state store/)
          // A grant nobody can check is not there: the read outside the project is refused.
          expect((await call(client, "read", { filePath: outside }, i)).isError).toBe(true)
          // Reading inside the project needs no store.
          expect((await call(client, "read", { filePath: "small.txt" }, i)).isError).toBe(false)
        }
        // Longer than a lease: when it is back, nobody fences anybody.
        await sleep(LEASE_MS + 2_000)
      } finally {
        pg.start()
      }
      for (const i of [0, 1]) {
        const back = await until(
          () => call(client, "todowrite", { todos: [{ id: "1", content: `back ${i}`, status: "pending" }] }, i),
          (r) => !r.isError
        )
        expect(back.isError).toBe(false)
        expect((await call(client, "read", { filePath: outside }, i)).isError).toBe(false)
      }
      await sleep(LEASE_MS / 2)
      expect(replicas.map((r) => r.child.exitCode)).toEqual([null, null])
      expect(query("SELECT count(*) FROM fc_hosts WHERE epoch > 1")).toBe(fencedBefore)
    } finally {
      await client.close()
    }
  }, 240_000)
})
