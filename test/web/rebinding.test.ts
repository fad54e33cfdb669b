/**
 * DNS rebinding: the SSRF guard checks the addresses actually connected to, not only the name
 * before the call. No test DNS server is available, so the resolver is injected
 * (WebNetwork.layerWith) and answers like a rebinding one; the connections, the server on
 * 127.0.0.1 and undici are real.
 */
import { isIP } from "node:net"
import { describe, expect, it } from "@effect/vitest"
import { Context, Effect, Exit, Layer, Scope } from "effect"
import { testToolSystem } from "../../layers/test.ts"
import { Orchestrator } from "../../src/orchestrator/orchestrator.ts"
import { ToolRegistry } from "../../src/registry/registry.ts"
import type { ToolResult } from "../../src/tool/result.ts"
import { WebFetchTool } from "../../src/tools/webfetch.ts"
import type { Resolve } from "../../src/web/address.ts"
import { guardedLookup } from "../../src/web/guard.ts"
import { MAX_APPROVED_HOSTS, WebNetwork } from "../../src/web/network.ts"
import { startServer } from "./server.ts"

const PUBLIC = "93.184.216.34"

/**
 * A resolver answering each name from a script, one answer per lookup (the last one repeats),
 * recording every question so a test can tell the check's lookup from the connection's.
 */
const scripted = (script: Record<string, ReadonlyArray<string>>) => {
  const asked: Array<string> = []
  const resolve: Resolve = async (host) => {
    const n = asked.filter((h) => h === host).length
    asked.push(host)
    const answers = script[host]
    if (answers === undefined)
      throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: "ENOTFOUND", hostname: host })
    const address = answers[Math.min(n, answers.length - 1)]!
    return [{ address, family: isIP(address) }]
  }
  return { asked, resolve }
}

/**
 * Runs `body` with webfetch registered against a network that resolves with `resolve`. The
 * person's answer is `approve`; every question they are asked is recorded in `asked`.
 */
const withNetwork = <A, E>(
  resolve: Resolve,
  body: (call: (url: string) => Effect.Effect<ToolResult, never, Orchestrator>) => Effect.Effect<A, E, Orchestrator>,
  approve: boolean,
  questions: Array<string> = []
) =>
  Effect.gen(function* () {
    yield* ToolRegistry.use((r) => r.register(WebFetchTool)).pipe(Effect.orDie)
    let n = 0
    return yield* body((url) =>
      Orchestrator.use((o) =>
        o.execute(
          { id: `r${n++}`, name: "webfetch", args: { url } },
          {
            sessionId: "s",
            approve: (request) => Effect.sync(() => questions.push(request.reason)).pipe(Effect.as(approve))
          }
        )
      )
    )
  }).pipe(
    Effect.provide(WebNetwork.layerWith(resolve)),
    Effect.provide(testToolSystem({ root: process.cwd(), tools: [] }))
  )

/** A loopback server recording hits and the connections they came on; resolves to its port. */
const counted = () => {
  const hits: Array<string> = []
  const connections = new Set<number>()
  return Effect.map(
    startServer((req, res, url) => {
      hits.push(`${req.headers.host}${url.pathname}`)
      connections.add(req.socket.remotePort ?? -1)
      if (url.pathname === "/out")
        res.writeHead(302, { location: `http://evil.test:${url.searchParams.get("p")}/x` }).end()
      else res.writeHead(200, { "content-type": "text/plain" }).end("internal page")
    }),
    (base) => ({ hits, connections, port: Number(new URL(base).port) })
  )
}

describe("webfetch: DNS rebinding", () => {
  it.live("a name public when checked but 127.0.0.1 when connecting is refused, naming both", () =>
    Effect.gen(function* () {
      const { hits, port } = yield* counted()
      const dns = scripted({ "rebind.test": [PUBLIC, "127.0.0.1"] })
      const questions: Array<string> = []
      const result = yield* withNetwork(
        dns.resolve,
        (call) => call(`http://rebind.test:${port}/secret`),
        true,
        questions
      )
      expect(result.status).toBe("error")
      expect(result.modelOutput).toBe(
        `http://rebind.test:${port}/secret was not fetched: when connecting, rebind.test resolved to 127.0.0.1, ` +
          "a local or private address this call was not approved for (the DNS answer may have changed since the " +
          "check). Reaching it needs the person's approval: fetch a URL on rebind.test again so they are asked, or " +
          "use another source."
      )
      expect(result.attempts).toBe(1) // a refusal is not a transient failure
      expect(dns.asked).toEqual(["rebind.test", "rebind.test"]) // checked, then resolved again to connect
      expect(questions).toEqual([]) // public when checked: nobody was asked
      expect(hits).toEqual([])
    })
  )

  it.live("an approved internal host still reaches the server; declined, it does not", () =>
    Effect.gen(function* () {
      const { hits, port } = yield* counted()
      const dns = scripted({ "intranet.test": ["127.0.0.1"] })
      const questions: Array<string> = []
      const ok = yield* withNetwork(dns.resolve, (call) => call(`http://intranet.test:${port}/wiki`), true, questions)
      expect(ok).toMatchObject({ status: "ok", modelOutput: "internal page" })
      expect(questions).toEqual([
        "intranet.test:" + port + " resolves to a local or private address (127.0.0.1); fetching it needs approval."
      ])
      expect(hits).toEqual([`intranet.test:${port}/wiki`])

      const declined = yield* withNetwork(dns.resolve, (call) => call(`http://intranet.test:${port}/wiki`), false)
      expect(declined.status).toBe("denied")
      expect(hits).toHaveLength(1)
    })
  )

  it.live("a connection kept from an approved call never serves a later call that was not approved", () =>
    Effect.gen(function* () {
      const { hits, connections, port } = yield* counted()
      // Internal for the first call (approved); public when the second is checked (internal when it
      // connects); internal again for the third (approved).
      const dns = scripted({ "flip.test": ["127.0.0.1", "127.0.0.1", PUBLIC, "127.0.0.1", "127.0.0.1"] })
      const questions: Array<string> = []
      // The pause lets the first connection go back to its pool, where the later calls could find it.
      const settle = Effect.sleep("100 millis")
      const [first, second, third] = yield* withNetwork(
        dns.resolve,
        (call) =>
          Effect.all([
            call(`http://flip.test:${port}/a`),
            settle.pipe(Effect.andThen(call(`http://flip.test:${port}/b`))),
            settle.pipe(Effect.andThen(call(`http://flip.test:${port}/c`)))
          ]),
        true,
        questions
      )
      expect(first).toMatchObject({ status: "ok", modelOutput: "internal page" })
      expect(second.status).toBe("error")
      expect(second.modelOutput).toContain("flip.test resolved to 127.0.0.1")
      expect(third).toMatchObject({ status: "ok", modelOutput: "internal page" })
      expect(questions).toHaveLength(2) // the first and third calls asked, the second did not
      expect(hits).toEqual([`flip.test:${port}/a`, `flip.test:${port}/c`])
      // The third call reused the first one's connection (no connect-time lookup), so the pooling
      // the second call was kept out of is real.
      expect(connections.size).toBe(1)
      expect(dns.asked).toHaveLength(5)
    })
  )

  it.live("the approval covers the host the person saw: a redirect to another host that rebinds is refused", () =>
    Effect.gen(function* () {
      const { hits, port } = yield* counted()
      // evil.test is public when the redirect is checked, loopback when connecting.
      const dns = scripted({ "start.test": ["127.0.0.1"], "evil.test": [PUBLIC, "127.0.0.1"] })
      const result = yield* withNetwork(dns.resolve, (call) => call(`http://start.test:${port}/out?p=${port}`), true)
      expect(result.status).toBe("error")
      expect(result.modelOutput).toContain(
        `http://start.test:${port}/out?p=${port} was not fetched: when connecting, evil.test resolved to 127.0.0.1`
      )
      expect(hits).toEqual([`start.test:${port}/out`])
      expect(dns.asked).toEqual(["start.test", "start.test", "evil.test", "evil.test"])
    })
  )

  it.live("localhost through the system resolver: asks, then connects when approved", () =>
    Effect.gen(function* () {
      const { hits, port } = yield* counted()
      const system = testToolSystem({ root: process.cwd(), tools: [WebFetchTool] })
      const call = (approve: boolean | undefined) =>
        Orchestrator.use((o) =>
          o.execute(
            { id: "l", name: "webfetch", args: { url: `http://localhost:${port}/home` } },
            approve === undefined ? { sessionId: "s" } : { sessionId: "s", approve: () => Effect.succeed(approve) }
          )
        ).pipe(Effect.provide(system))
      expect((yield* call(undefined)).status).toBe("denied")
      expect(yield* call(true)).toMatchObject({ status: "ok", modelOutput: "internal page" })
      expect(hits).toEqual([`localhost:${port}/home`])
    })
  )

  it.live("a name that does not resolve when connecting still says so", () =>
    Effect.gen(function* () {
      const dns = scripted({})
      const result = yield* withNetwork(dns.resolve, (call) => call("http://nowhere.test/"), true)
      expect(result.status).toBe("error")
      expect(result.modelOutput).toBe(
        "The host of http://nowhere.test/ does not resolve (ENOTFOUND). Check the URL's spelling."
      )
      expect(dns.asked).toEqual(["nowhere.test", "nowhere.test"])
    })
  )

  it("the guarded lookup answers net's both shapes and refuses internal answers for other hosts", async () => {
    const dns = scripted({ "a.test": ["10.0.0.7"], "b.test": [PUBLIC], "v6.test": ["fd00::1"] })
    const ask = (host: string, approved: string | undefined, options: { all?: boolean; family?: number }) =>
      new Promise<{ error: unknown; address: unknown; family: unknown }>((done) =>
        guardedLookup(dns.resolve, approved)(host, options, (error, address, family) =>
          done({ error, address, family })
        )
      )
    const refused = await ask("a.test", undefined, { all: true })
    expect(refused.error).toMatchObject({ name: "InternalAddressRefused", host: "a.test", addresses: ["10.0.0.7"] })
    expect((await ask("v6.test", "a.test", {})).error).toMatchObject({ addresses: ["fd00::1"] })
    expect(await ask("A.test", "a.test", {})).toMatchObject({ error: null, address: "10.0.0.7", family: 4 })
    expect(await ask("b.test", undefined, { all: true })).toMatchObject({
      error: null,
      address: [{ address: PUBLIC, family: 4 }]
    })
    expect((await ask("b.test", undefined, { family: 6 })).error).toMatchObject({ code: "ENOTFOUND" })
    expect((await ask("nowhere.test", undefined, {})).error).toMatchObject({ code: "ENOTFOUND" })
  })

  it.live(
    "dispatchers are reused per approval, the oldest approved one is closed past the cap, all close with the layer",
    () =>
      Effect.gen(function* () {
        const scope = yield* Scope.make()
        const context = yield* Layer.buildWithScope(WebNetwork.layerWith(scripted({}).resolve), scope)
        const network = Context.get(context, WebNetwork)
        const dispatcher = (host: string | undefined) => Effect.promise(() => network.dispatcher(host))
        const strict = yield* dispatcher(undefined)
        expect(yield* dispatcher(undefined)).toBe(strict)
        const first = yield* dispatcher("h0.test")
        expect(yield* dispatcher("h0.test")).toBe(first)
        expect(first).not.toBe(strict)
        const closed = (d: unknown) => (d as { closed: boolean }).closed
        const others = yield* Effect.forEach(
          Array.from({ length: MAX_APPROVED_HOSTS - 1 }, (_, i) => `h${i + 1}.test`),
          dispatcher
        )
        yield* dispatcher("h0.test") // used again: now the most recent
        const last = yield* dispatcher("one-too-many.test")
        yield* Effect.sleep("10 millis") // the eviction closes the oldest asynchronously
        expect(closed(first)).toBe(false)
        expect(closed(others[0])).toBe(true) // h1.test was the least recently used
        expect(closed(strict)).toBe(false)
        yield* Scope.close(scope, Exit.void)
        expect([strict, first, ...others.slice(1), last].map(closed)).toEqual(Array(MAX_APPROVED_HOSTS + 1).fill(true))
      })
  )
})
