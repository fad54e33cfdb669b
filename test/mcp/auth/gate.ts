/**
 * A protected resource in front of a real MCP server, for the client's login tests: a reverse
 * proxy on 127.0.0.1 that publishes protected resource metadata (RFC 9728) naming an
 * authorization server the test can change, and asks for a token, per JSON-RPC request, only
 * where the test's rule says so — a server whose first request is open and whose calls are not,
 * or whose calls want a wider scope (403 insufficient_scope). Tokens are the authorization
 * server's JWTs, checked against its keys, audience and issuer; whatever passes is forwarded
 * unchanged (without the token) to the server behind.
 */
import * as NodeHttp from "node:http"
import type { AddressInfo } from "node:net"
import { Effect, Layer, Scope } from "effect"
import { createRemoteJWKSet, jwtVerify } from "jose"
import { testToolSystem } from "../../../layers/test.ts"
import { serveHttp } from "../../../src/mcp/transports.ts"
import { LsTool } from "../../../src/tools/ls.ts"

export interface Gate {
  /** The MCP endpoint a client is given. */
  readonly url: string
  /** The authorization server the metadata names (changed by the test: a migration). */
  issuer: string
  /** The scopes a request needs; undefined: open to all. */
  rule: (method: string, params: Record<string, unknown>) => ReadonlyArray<string> | undefined
  /** What was refused, in order: status and method. */
  readonly refusals: Array<{ readonly status: number; readonly method: string }>
  readonly close: () => Promise<void>
}

export const startGate = async (upstream: string, issuer: string): Promise<Gate> => {
  const keys = new Map<string, ReturnType<typeof createRemoteJWKSet>>()
  const keysOf = (iss: string) => {
    let found = keys.get(iss)
    if (found === undefined) {
      found = createRemoteJWKSet(new URL(`${iss}/jwks`))
      keys.set(iss, found)
    }
    return found
  }
  const server = NodeHttp.createServer()
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()))
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  const metadataUrl = `${base}/.well-known/oauth-protected-resource/mcp`
  const gate: Gate = {
    url: `${base}/mcp`,
    issuer,
    rule: () => undefined,
    refusals: [],
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      })
  }

  /** The scopes the token grants, or undefined when it is missing or not good here. */
  const granted = async (authorization: string | undefined): Promise<ReadonlyArray<string> | undefined> => {
    if (authorization?.startsWith("Bearer ") !== true) return undefined
    try {
      const { payload } = await jwtVerify(authorization.slice(7), keysOf(gate.issuer), {
        issuer: gate.issuer,
        audience: gate.url
      })
      return typeof payload.scope === "string" ? payload.scope.split(" ") : []
    } catch {
      return undefined
    }
  }

  server.on("request", (req, res) => {
    const chunks: Array<Buffer> = []
    req.on("data", (b: Buffer) => chunks.push(b))
    req.on("end", async () => {
      try {
        if (req.url === "/.well-known/oauth-protected-resource/mcp") {
          res.writeHead(200, { "content-type": "application/json" })
          res.end(JSON.stringify({ resource: gate.url, authorization_servers: [gate.issuer] }))
          return
        }
        const body = Buffer.concat(chunks)
        let message: { method?: unknown; params?: unknown } = {}
        try {
          message = JSON.parse(body.toString("utf8") || "{}")
        } catch {}
        const method = typeof message.method === "string" ? message.method : ""
        const params = (typeof message.params === "object" && message.params !== null ? message.params : {}) as Record<
          string,
          unknown
        >
        const needs = method === "" ? undefined : gate.rule(method, params)
        if (needs !== undefined) {
          const scopes = await granted(req.headers.authorization)
          const wanted = needs.join(" ")
          if (scopes === undefined) {
            gate.refusals.push({ status: 401, method })
            res.writeHead(401, {
              "www-authenticate": `Bearer resource_metadata="${metadataUrl}", scope="${wanted}"`,
              "content-type": "application/json"
            })
            res.end(JSON.stringify({ error: "invalid_token" }))
            return
          }
          if (!needs.every((s) => scopes.includes(s))) {
            gate.refusals.push({ status: 403, method })
            res.writeHead(403, {
              "www-authenticate": `Bearer error="insufficient_scope", scope="${wanted}", resource_metadata="${metadataUrl}"`,
              "content-type": "application/json"
            })
            res.end(JSON.stringify({ error: "insufficient_scope" }))
            return
          }
        }
        const headers: Record<string, string> = {}
        for (const [k, v] of Object.entries(req.headers)) {
          if (typeof v === "string" && !["authorization", "host", "content-length", "connection"].includes(k)) {
            headers[k] = v
          }
        }
        const answer = await fetch(upstream, {
          method: req.method ?? "POST",
          headers,
          ...(req.method === "GET" || req.method === "HEAD" ? {} : { body })
        })
        const out: Record<string, string> = {}
        answer.headers.forEach((v, k) => {
          if (!["content-length", "content-encoding", "transfer-encoding", "connection"].includes(k)) out[k] = v
        })
        res.writeHead(answer.status, out)
        if (answer.body === null) return void res.end()
        for await (const chunk of answer.body) res.write(chunk)
        res.end()
      } catch (e) {
        if (!res.headersSent) res.writeHead(502)
        res.end(String(e))
      }
    })
  })
  return gate
}

/** Our own `ls` served over HTTP (no token) for `root`, behind a gate naming `issuer`; the server lives as long as `scope`. */
export const startGatedLs = async (root: string, issuer: string, scope: Scope.Scope): Promise<Gate> => {
  const upstream = await Effect.runPromise(
    Effect.gen(function* () {
      const system = yield* Layer.build(testToolSystem({ root, tools: [LsTool] }))
      return yield* serveHttp(system, 0, { auth: { kind: "none" } })
    }).pipe(Scope.provide(scope))
  )
  return startGate(upstream.url, issuer)
}
