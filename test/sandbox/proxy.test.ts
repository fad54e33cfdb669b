/**
 * The sandbox's proxy on a loopback port, as macOS's sandbox reaches it (bubblewrap's Unix
 * socket form is covered through real bash in sandbox.test.ts): real sockets, a real upstream.
 */
import * as NodeHttp from "node:http"
import * as NodeNet from "node:net"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { startProxy } from "../../src/sandbox/proxy.ts"

const upstream = Effect.acquireRelease(
  Effect.promise(
    () =>
      new Promise<NodeHttp.Server>((done) => {
        const server = NodeHttp.createServer((_req, res) => res.end("hello from upstream\n"))
        server.listen(0, "127.0.0.1", () => done(server))
      })
  ),
  (server) => Effect.promise(() => new Promise<void>((done) => server.close(() => done())))
)

const proxyOn = (domains: ReadonlyArray<string>) =>
  Effect.acquireRelease(
    Effect.promise(() => startProxy({ port: 0 }, domains)),
    (p) => Effect.promise(() => p.close())
  )

/** Sends `request` to 127.0.0.1:port and returns everything the other side wrote before closing (or 2 s). */
const exchange = (port: number, request: string) =>
  Effect.promise(
    () =>
      new Promise<string>((done) => {
        let text = ""
        const socket = NodeNet.connect(port, "127.0.0.1", () => socket.write(request))
        socket.setEncoding("utf8")
        socket.on("data", (d: string) => {
          text += d
          // A tunnel stays open: once the upstream's answer is through, the exchange is done.
          if (text.includes("hello from upstream")) socket.destroy()
        })
        socket.on("close", () => done(text))
        socket.on("error", () => done(text))
        setTimeout(() => socket.destroy(), 2_000).unref()
      })
  )

describe("the sandbox's proxy on a loopback port", () => {
  it.live("listens on a free port and reports it", () =>
    Effect.gen(function* () {
      const proxy = yield* proxyOn(["127.0.0.1"])
      expect("port" in proxy.listen && proxy.listen.port > 0).toBe(true)
    })
  )

  it.live("plain HTTP and CONNECT reach an allowed host; another host gets 403 naming the setting", () =>
    Effect.gen(function* () {
      const server = yield* upstream
      const port = (server.address() as { port: number }).port
      const proxy = yield* proxyOn(["127.0.0.1"])
      const at = "port" in proxy.listen ? proxy.listen.port : 0

      const plain = yield* exchange(
        at,
        `GET http://127.0.0.1:${port}/ HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`
      )
      expect(plain).toContain("hello from upstream")

      const tunnel = yield* exchange(
        at,
        `CONNECT 127.0.0.1:${port} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\nGET / HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`
      )
      expect(tunnel).toContain("200 Connection Established")
      expect(tunnel).toContain("hello from upstream")

      // localhost is the same machine but not the allowed name: refused.
      const refused = yield* exchange(at, `CONNECT localhost:${port} HTTP/1.1\r\nHost: localhost\r\n\r\n`)
      expect(refused).toContain("403")
      expect(refused).toContain("sandbox.network.allowedDomains")
      expect(refused).not.toContain("hello from upstream")

      const refusedPlain = yield* exchange(
        at,
        `GET http://localhost:${port}/ HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n`
      )
      expect(refusedPlain).toContain("403")
      expect(refusedPlain).not.toContain("hello from upstream")
    })
  )
})
