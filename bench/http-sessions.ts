/**
 * Memory of `mcp --http` across rounds of clients that never send DELETE: each round 50 SDK
 * clients connect, list, run `ls` and `read`, and close (no DELETE); after the round the bench
 * waits until the server's sessions owner holds none (or, with no idle limit, a second), and the
 * server collects garbage and reports its figures.
 *   node bench/http-sessions.ts
 * The server is a process of its own (run with --expose-gc; told "figures" on stdin), so its
 * figures hold nothing of the clients'. Two configurations: sessions ending after 500 ms idle
 * (what `--session-idle` does), and no idle limit with a cap of 1,000 (how every session was
 * kept until DELETE before).
 */
import { spawn } from "node:child_process"
import { createInterface } from "node:readline"

const ROUNDS = 3
const CLIENTS = 50

type Mode = "idle" | "kept"
interface Figures {
  readonly sessions: number
  readonly counts: Readonly<Record<string, number>>
  readonly rssMB: number
  readonly heapMB: number
}

const mb = (n: number) => Math.round((n / 1024 / 1024) * 10) / 10

/** The server: prints its URL, then one line of figures for each "figures" line it reads. */
const server = async (mode: Mode) => {
  const { ConfigProvider, Context, Effect, Layer, Scope } = await import("effect")
  const { ToolSystem } = await import("../layers/live.ts")
  const { serveHttp } = await import("../src/mcp/transports.ts")
  const { Sessions } = await import("../src/session/sessions.ts")
  const gc = (globalThis as { gc?: () => void }).gc ?? (() => undefined)
  const scope = Effect.runSync(Scope.make())
  const layer = ToolSystem.layer({ root: process.cwd() }).pipe(
    Layer.provide(mode === "idle" ? Sessions.layerWith({ idleMs: 500 }) : Sessions.layerWith({ maxSessions: 1_000 })),
    Layer.provide(ConfigProvider.layer(ConfigProvider.fromEnv({ env: process.env as Record<string, string> })))
  )
  const system = await Effect.runPromise(Scope.provide(Layer.build(layer), scope))
  const serving = await Effect.runPromise(Scope.provide(serveHttp(system, 0), scope))
  const sessions = Context.get(system, Sessions)
  process.stdout.write(`${serving.url}\n${serving.auth.kind === "token" ? serving.auth.token : ""}\n`)
  for await (const _ of createInterface({ input: process.stdin })) {
    await Effect.runPromise(sessions.settled)
    gc()
    const m = process.memoryUsage()
    const figures: Figures = {
      sessions: sessions.size(),
      counts: sessions.counts(),
      rssMB: mb(m.rss),
      heapMB: mb(m.heapUsed)
    }
    process.stdout.write(`${JSON.stringify(figures)}\n`)
  }
  process.exit(0)
}

const measure = async (mode: Mode): Promise<Array<Figures>> => {
  const { Client } = await import("@modelcontextprotocol/sdk/client/index.js")
  const { StreamableHTTPClientTransport } = await import("@modelcontextprotocol/sdk/client/streamableHttp.js")
  const child = spawn(process.execPath, ["--expose-gc", import.meta.filename, "--server", mode], {
    stdio: ["pipe", "pipe", "inherit"]
  })
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]()
  const next = async () => String((await lines.next()).value)
  const url = new URL(await next())
  const token = await next()
  const figures = async () => {
    child.stdin.write("figures\n")
    return JSON.parse(await next()) as Figures
  }
  const rows = [await figures()]
  for (let round = 1; round <= ROUNDS; round++) {
    for (let i = 0; i < CLIENTS; i++) {
      const client = new Client({ name: "bench", version: "1.0.0" })
      await client.connect(
        new StreamableHTTPClientTransport(url, { requestInit: { headers: { authorization: `Bearer ${token}` } } })
      )
      await client.listTools()
      await client.callTool({ name: "ls", arguments: {} })
      await client.callTool({ name: "read", arguments: { filePath: "README.md" } })
      await client.close()
    }
    let now = await figures()
    for (let i = 0; i < 100 && mode === "idle" && now.sessions > 0; i++) {
      await new Promise((r) => setTimeout(r, 100))
      now = await figures()
    }
    if (mode === "kept") {
      await new Promise((r) => setTimeout(r, 1_000))
      now = await figures()
    }
    rows.push(now)
  }
  child.kill()
  return rows
}

if (process.argv[2] === "--server") {
  await server(process.argv[3] as Mode)
} else {
  console.log("| sessions end | after round | sessions alive | state entries (all slots) | RSS | JS heap used |")
  console.log("| --- | --- | --- | --- | --- | --- |")
  for (const [mode, label] of [
    ["idle", "after 500 ms idle"],
    ["kept", "never (kept until DELETE, as before)"]
  ] as const) {
    const rows = await measure(mode)
    rows.forEach((r, round) => {
      const entries = Object.entries(r.counts).reduce((n, [k, v]) => (k === "sessions" ? n : n + v), 0)
      console.log(`| ${label} | ${round} | ${r.sessions} | ${entries} | ${r.rssMB} MB | ${r.heapMB} MB |`)
    })
  }
  process.exit(0)
}
