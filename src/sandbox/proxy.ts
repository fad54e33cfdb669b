/**
 * The sandbox's one way out: an HTTP proxy outside the sandbox that connects only to allowed
 * hosts. Under bubblewrap it listens on a Unix socket bound into the sandbox, and inside `socat`
 * turns 127.0.0.1:PROXY_PORT into that socket; under Seatbelt it listens on a loopback port, the
 * one address the profile lets a command connect to. HTTP_PROXY / HTTPS_PROXY point at it; a
 * program that ignores them finds no network at all, so the filter fails closed.
 *
 * It speaks CONNECT (HTTPS, or any TCP a client tunnels) and plain HTTP requests in absolute
 * form. A refused host gets 403 with a line saying which setting allows it.
 */
import type * as NodeHttp from "node:http"
import * as NodeNet from "node:net"
import { lazyRequire } from "../load/lazy.ts"
import { domainAllowed } from "./policy.ts"

// By require: an ESM import of node:http also loads Node's internal undici, ~60 ms of CPU at
// start-up, for a proxy that only starts with bash's first networked sandboxed call.
const nodeHttp = lazyRequire<typeof NodeHttp>("node:http")

/** The port the bridge listens on inside the sandbox (its own network namespace: nothing else there). */
export const PROXY_PORT = 3128

/** What points a command at the proxy (NO_PROXY and no_proxy are removed beside them). */
export const PROXY_VARIABLES = ["HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "ALL_PROXY", "all_proxy"]

/** Where the proxy listens: a Unix socket's path, or a TCP port on 127.0.0.1 (0: any free one). */
export type ProxyListen = { readonly socket: string } | { readonly port: number }

export interface SandboxProxy {
  /** Where it listens (the port as bound, never 0). */
  readonly listen: ProxyListen
  readonly close: () => Promise<void>
}

const refusal = (host: string) =>
  `The sandbox blocked a connection to ${host}: it is not in sandbox.network.allowedDomains (nor allowed by a WebFetch(domain:…) rule). Add it there to allow it.\n`

/** Splits `host:port` (with [v6] brackets) into its parts; undefined when it is not one. */
const hostPort = (text: string, defaultPort: number): { host: string; port: number } | undefined => {
  const m = /^\[([^\]]+)\](?::(\d+))?$/.exec(text) ?? /^([^:]+)(?::(\d+))?$/.exec(text)
  if (m === null || m[1] === undefined) return undefined
  const port = m[2] === undefined ? defaultPort : Number(m[2])
  return Number.isInteger(port) && port > 0 && port < 65536 ? { host: m[1], port } : undefined
}

export const startProxy = (listen: ProxyListen, domains: ReadonlyArray<string>): Promise<SandboxProxy> => {
  const server = nodeHttp().createServer((req, res) => {
    let target: URL
    try {
      target = new URL(req.url ?? "")
    } catch {
      res.writeHead(400).end("The sandbox's proxy takes absolute http:// URLs.\n")
      return
    }
    if (target.protocol !== "http:" || !domainAllowed(domains, target.hostname.replace(/^\[|\]$/g, ""))) {
      res.writeHead(403).end(refusal(target.hostname))
      return
    }
    const upstream = nodeHttp().request(
      {
        host: target.hostname.replace(/^\[|\]$/g, ""),
        port: target.port === "" ? 80 : Number(target.port),
        path: `${target.pathname}${target.search}`,
        method: req.method,
        headers: req.headers
      },
      (up) => {
        res.writeHead(up.statusCode ?? 502, up.headers)
        up.pipe(res)
      }
    )
    upstream.on("error", (e) => {
      if (!res.headersSent) res.writeHead(502)
      res.end(`The sandbox's proxy could not reach ${target.host}: ${e.message}\n`)
    })
    req.pipe(upstream)
  })
  // Tunnels leave the HTTP server's bookkeeping once connected: kept here to end them on close.
  const tunnels = new Set<NodeNet.Socket>()
  server.on("connect", (req: NodeHttp.IncomingMessage, client: NodeNet.Socket, head: Buffer) => {
    tunnels.add(client)
    client.on("close", () => tunnels.delete(client))
    const target = hostPort(req.url ?? "", 443)
    client.on("error", () => client.destroy())
    if (target === undefined || !domainAllowed(domains, target.host)) {
      client.end(
        `HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain\r\n\r\n${refusal(target?.host ?? String(req.url))}`
      )
      return
    }
    const upstream = NodeNet.connect(target.port, target.host, () => {
      client.write("HTTP/1.1 200 Connection Established\r\n\r\n")
      if (head.length > 0) upstream.write(head)
      upstream.pipe(client)
      client.pipe(upstream)
    })
    upstream.on("error", (e) => {
      client.end(`HTTP/1.1 502 Bad Gateway\r\nContent-Type: text/plain\r\n\r\n${e.message}\n`)
    })
    client.on("close", () => upstream.destroy())
  })
  return new Promise((resolve, reject) => {
    server.once("error", reject)
    const bound = () => {
      server.off("error", reject)
      const address = server.address()
      resolve({
        listen:
          "socket" in listen ? listen : { port: typeof address === "object" && address !== null ? address.port : 0 },
        close: () =>
          new Promise<void>((done) => {
            server.closeAllConnections()
            for (const t of tunnels) t.destroy()
            server.close(() => done())
          })
      })
    }
    if ("socket" in listen) server.listen(listen.socket, bound)
    else server.listen(listen.port, "127.0.0.1", bound)
  })
}
