/**
 * A round-robin HTTP load balancer on loopback, as a team would put in front of several
 * `mcp --http` replicas: no sticky sessions, each request to the next replica. A replica that
 * refuses the connection (it is down) is skipped, which is safe: nothing reached it. A request
 * cut after it was sent (the replica died mid-call) is answered 502, never replayed: only the
 * client knows whether to retry. Each request is logged with the replica that took it.
 */
import * as NodeHttp from "node:http"

export interface Routed {
  readonly replica: number
  readonly method: string
  /** The JSON-RPC method, and for tools/call the tool's name. */
  readonly rpc: string | undefined
  readonly tool: string | undefined
}

export interface RoundRobin {
  readonly url: string
  readonly log: Array<Routed>
  /** Why each request answered 502 failed (which replica, the error). */
  readonly failures: Array<string>
  /**
   * Sends the next tools/call to this replica (other requests go on in turn): for a test to say
   * which replica serves a given call, whatever else its client sends between calls.
   */
  readonly aim: (replica: number) => void
  /** The replicas' ports, by index; replaced when a replica is restarted. */
  readonly ports: Array<number>
  readonly close: () => Promise<void>
}

const describe = (body: Buffer): { rpc: string | undefined; tool: string | undefined } => {
  try {
    const message = JSON.parse(body.toString("utf8")) as { method?: unknown; params?: { name?: unknown } }
    return {
      rpc: typeof message.method === "string" ? message.method : undefined,
      tool: typeof message.params?.name === "string" ? message.params.name : undefined
    }
  } catch {
    return { rpc: undefined, tool: undefined }
  }
}

export const startRoundRobin = (ports: Array<number>): Promise<RoundRobin> => {
  const log: Array<Routed> = []
  const failures: Array<string> = []
  let next = 0
  let aimed: number | undefined
  const forward = (
    req: NodeHttp.IncomingMessage,
    res: NodeHttp.ServerResponse,
    body: Buffer,
    replica: number,
    tries: number
  ): void => {
    const rpc = describe(body)
    const port = ports[replica]!
    const upstream = NodeHttp.request(
      {
        host: "127.0.0.1",
        port,
        method: req.method,
        path: req.url,
        // The replica checks Host against its own address (DNS rebinding): say it is asked.
        headers: { ...req.headers, host: `127.0.0.1:${port}` }
      },
      (answer) => {
        log.push({ replica, method: req.method ?? "", ...rpc })
        res.writeHead(answer.statusCode ?? 502, { ...answer.headers, "x-replica": String(replica) })
        answer.pipe(res)
        answer.on("error", () => res.destroy())
        res.once("close", () => answer.destroy())
      }
    )
    upstream.on("error", (e: NodeJS.ErrnoException) => {
      // Refused: nothing reached it, so the next replica may take the request.
      if (e.code === "ECONNREFUSED" && tries < ports.length) {
        return forward(req, res, body, (replica + 1) % ports.length, tries + 1)
      }
      failures.push(`replica ${replica}: ${e.code ?? ""} ${e.message}`)
      if (!res.headersSent) {
        res.writeHead(502, { "content-type": "text/plain" })
        res.end(`replica ${replica} failed: ${e.message}`)
      } else res.destroy()
    })
    upstream.end(body)
  }
  const server = NodeHttp.createServer((req, res) => {
    const chunks: Array<Buffer> = []
    req.on("data", (c: Buffer) => chunks.push(c))
    req.on("end", () => {
      const body = Buffer.concat(chunks)
      let replica: number
      if (aimed !== undefined && describe(body).rpc === "tools/call") {
        replica = aimed
        aimed = undefined
      } else replica = next++ % ports.length
      forward(req, res, body, replica, 1)
    })
  })
  return new Promise((resolve) => {
    server.listen(0, "127.0.0.1", () => {
      const address = server.address() as { port: number }
      resolve({
        url: `http://127.0.0.1:${address.port}/mcp`,
        log,
        failures,
        aim: (replica) => {
          aimed = replica
        },
        ports,
        close: () =>
          new Promise<void>((done) => {
            server.closeAllConnections()
            server.close(() => done())
          })
      })
    })
  })
}
