/**
 * Every spelling of an internal address asks before webfetch reaches it: IPv4-mapped and
 * -compatible IPv6, NAT64, 6to4, Teredo, decimal, octal, hex and short IPv4, `0`, `[::]`,
 * trailing dots, `localhost` names, DNS answers in any of these forms, and redirects to them. Each
 * form is sent to a real server on 127.0.0.1 that counts its hits: the person declines, and the
 * server must see nothing. One approved call shows the mapped form really does reach it.
 */
import { isIP } from "node:net"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { testToolSystem } from "../../layers/test.ts"
import { Orchestrator } from "../../src/orchestrator/orchestrator.ts"
import { WebFetchTool, webfetchHost } from "../../src/tools/webfetch.ts"
import { isInternalAddress, type Resolve } from "../../src/web/address.ts"
import { WebNetwork } from "../../src/web/network.ts"
import { startServer } from "./server.ts"

/** Names answered by the test: each to one address, as a DNS server under an attacker's control would. */
const ANSWERS: Record<string, string> = {
  "mapped.test": "::ffff:127.0.0.1",
  "mapped-hex.test": "::ffff:7f00:1",
  "private.test": "10.0.0.1",
  "public.test": "93.184.216.34"
}
const resolve: Resolve = async (host) => {
  const address = ANSWERS[host] ?? (isIP(host) !== 0 ? host : host.endsWith("localhost") ? "127.0.0.1" : undefined)
  if (address === undefined) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: "ENOTFOUND" })
  return [{ address, family: isIP(address) }]
}
const system = testToolSystem({ root: process.cwd(), tools: [WebFetchTool] }).pipe(
  Layer.provide(WebNetwork.layerWith(resolve))
)

const fetchAs = (url: string, approve: boolean, questions: Array<string>) =>
  Orchestrator.use((o) =>
    o.execute(
      { id: "f", name: "webfetch", args: { url } },
      { sessionId: "s", approve: (q) => Effect.sync(() => questions.push(q.reason)).pipe(Effect.as(approve)) }
    )
  )

describe("address forms", () => {
  it("isInternalAddress: every IPv6 form that carries an internal IPv4 address, and the special ranges", () => {
    const internal = [
      "::ffff:127.0.0.1",
      "::ffff:7f00:1",
      "::127.0.0.1",
      "::7f00:1",
      "::ffff:0:127.0.0.1",
      "64:ff9b::127.0.0.1",
      "64:ff9b::a00:1",
      "64:ff9b:1::8.8.8.8",
      "2002:7f00:1::1",
      "2002:c0a8:101::",
      "2001:0:7f00:1::",
      "2001:0:4136:e378:8000:63bf:80ff:fffe",
      "::",
      "::1",
      "0:0:0:0:0:0:0:1",
      "fe80::1%eth0",
      "fd12::1",
      "fec0::1",
      "ff02::1",
      "0.0.0.0",
      "0.1.2.3",
      "127.255.255.254",
      "169.254.169.254",
      "100.100.100.200",
      "192.0.0.170",
      "198.18.0.1",
      "224.0.0.1",
      "255.255.255.255"
    ]
    for (const ip of internal) expect(isInternalAddress(ip), ip).toBe(true)
    for (const ip of [
      "8.8.8.8",
      "93.184.216.34",
      "::ffff:8.8.8.8",
      "64:ff9b::808:808",
      "2002:808:808::",
      "2606:4700::1111"
    ])
      expect(isInternalAddress(ip), ip).toBe(false)
    expect(webfetchHost({ url: "http://localhost./" })).toBe("localhost")
    expect(webfetchHost({ url: "http://Example.COM../x" })).toBe("example.com")
  })

  it.live("no spelling of loopback is reached without approval; approved, the mapped form reaches it", () =>
    Effect.gen(function* () {
      let hits = 0
      const base = yield* startServer((_req, res) => {
        hits++
        res.writeHead(200, { "content-type": "text/plain" })
        res.end("inside")
      })
      const port = new URL(base).port
      const forms = [
        `[::ffff:127.0.0.1]`,
        `[::ffff:7f00:1]`,
        `[::127.0.0.1]`,
        `[::ffff:0:127.0.0.1]`,
        `[64:ff9b::127.0.0.1]`,
        `[2002:7f00:1::1]`,
        `[::]`,
        `[::1]`,
        "2130706433",
        "0177.0.0.1",
        "0x7f.1",
        "0x7f000001",
        "127.1",
        "127.0.0.1.",
        "0",
        "0.0.0.0",
        "localhost",
        "localhost.",
        "LOCALHOST..",
        "app.localhost",
        "mapped.test",
        "mapped-hex.test",
        "private.test"
      ]
      for (const host of forms) {
        const questions: Array<string> = []
        const result = yield* fetchAs(`http://${host}:${port}/`, false, questions)
        expect(result.status, host).toBe("denied")
        expect(questions, host).toHaveLength(1)
        expect(questions[0], host).toContain("local or private address")
        expect(hits, host).toBe(0)
      }
      // An IPv6 zone id is no URL (the WHATWG parser refuses it): refused before anything connects.
      const zoned = yield* fetchAs(`http://[fe80::1%25lo]:${port}/`, false, [])
      expect(zoned.status).toBe("error")
      expect(hits).toBe(0)

      const approved = yield* fetchAs(`http://[::ffff:127.0.0.1]:${port}/`, true, [])
      expect(approved.status).toBe("ok")
      expect(approved.modelOutput).toBe("inside")
      expect(hits).toBe(1)
    }).pipe(Effect.provide(system))
  )

  it.live("a redirect from an approved host to another spelling of loopback is not followed", () =>
    Effect.gen(function* () {
      let hits = 0
      const base = yield* startServer((_req, res, url) => {
        if (url.pathname === "/start") {
          res.writeHead(302, { location: `http://[::ffff:7f00:1]:${port}/inside` })
          return res.end()
        }
        hits++
        res.writeHead(200, { "content-type": "text/plain" })
        res.end("inside")
      })
      const port = new URL(base).port
      // The person approves 127.0.0.1 itself; the redirect goes to another host that is loopback too.
      const result = yield* fetchAs(`${base}/start`, true, [])
      expect(result.status).toBe("error")
      expect(result.modelOutput).toContain("a local or private address; it was not followed")
      expect(hits).toBe(0)
    }).pipe(Effect.provide(system))
  )
})
