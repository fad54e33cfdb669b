/**
 * `mcp --http --auth oauth`: the server as an OAuth 2.1 resource server, against a real
 * authorization server run here (oidc-provider). Its protected resource metadata; 401 with a
 * WWW-Authenticate pointing at it for a missing, wrong, expired, other-audience, other-issuer
 * or badly signed token; 403 insufficient_scope; a good token gets a whole MCP session; the
 * same by introspection for opaque tokens; an issuer that cannot be reached refuses; and the CLI.
 */
import { spawn, spawnSync } from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Client as ModernClient, StreamableHTTPClientTransport as ModernTransport } from "@modelcontextprotocol/client"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { Effect, Layer, Scope } from "effect"
import { decodeJwt } from "jose"
import { testToolSystem } from "../../../layers/test.ts"
import type { OAuthResourceAuth } from "../../../src/mcp/auth/verify.ts"
import { type HttpServing, serveHttp } from "../../../src/mcp/transports.ts"
import { LsTool } from "../../../src/tools/ls.ts"
import { REPO, withToken } from "../helpers.ts"
import { type AuthorizationServer, RS_CLIENT, SCOPE, startAuthorizationServer } from "./authorization-server.ts"

const MAIN = NodePath.join(REPO, "src/cli/main.ts")
const root = NodeFs.realpathSync(NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "freecode-oauth-rs-")))

const INIT = JSON.stringify({
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "t", version: "1" } }
})

let as: AuthorizationServer
let other: AuthorizationServer
beforeAll(async () => {
  as = await startAuthorizationServer({ opaque: ["https://opaque.example/mcp", "https://elsewhere.example/mcp"] })
  other = await startAuthorizationServer()
}, 60_000)
afterAll(async () => {
  await as?.close()
  await other?.close()
})

/** Serves with `auth` (the issuer filled in) until the returned scope is closed. */
const serve = async (auth: Partial<OAuthResourceAuth> = {}) => {
  const scope = Effect.runSync(Scope.make())
  const serving = await Effect.runPromise(
    Effect.gen(function* () {
      const system = yield* Layer.build(testToolSystem({ root, tools: [LsTool] }))
      return yield* serveHttp(system, 0, { auth: { kind: "oauth", issuer: as.issuer, ...auth } })
    }).pipe(Scope.provide(scope))
  )
  return { serving, close: () => Effect.runPromise(Scope.close(scope, Effect.void as never)) }
}

const post = async (serving: HttpServing, token?: string, headers: Record<string, string> = {}) => {
  const res = await fetch(serving.url, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      ...(token === undefined ? {} : { authorization: `Bearer ${token}` }),
      ...headers
    },
    body: INIT
  })
  return { status: res.status, challenge: res.headers.get("www-authenticate") ?? "", body: await res.text() }
}

describe("mcp --http --auth oauth", () => {
  it("publishes protected resource metadata naming the issuer, and answers 401 pointing at it", async () => {
    const { serving, close } = await serve({ scopes: [SCOPE] })
    try {
      const metadataUrl = new URL("/.well-known/oauth-protected-resource/mcp", serving.url).href
      for (const url of [metadataUrl, new URL("/.well-known/oauth-protected-resource", serving.url).href]) {
        const res = await fetch(url)
        expect(res.status).toBe(200)
        expect(await res.json()).toEqual({
          resource: serving.url,
          authorization_servers: [as.issuer],
          scopes_supported: [SCOPE],
          bearer_methods_supported: ["header"],
          resource_name: "freecode-tools"
        })
      }
      const missing = await post(serving)
      expect(missing.status).toBe(401)
      expect(missing.challenge).toBe(`Bearer resource_metadata="${metadataUrl}", scope="${SCOPE}"`)
      expect(missing.body).toContain(`log in at ${as.issuer}`)
      // The Host check still comes first.
      const rebound = await post(serving, undefined, { origin: "http://evil.example" })
      expect(rebound.status).toBe(403)
    } finally {
      await close()
    }
  })

  it("refuses a wrong, expired, other-audience, other-issuer or badly signed token, each saying why", async () => {
    const { serving, close } = await serve()
    try {
      const good = await as.mint(serving.url)
      const refusals: Record<string, [string, RegExp]> = {
        wrong: ["not-a-token-at-all", /not a signed JWT access token/],
        "other audience": [
          await as.mint("http://127.0.0.1:1/mcp"),
          /is for http:\/\/127\.0\.0\.1:1\/mcp, not this server/
        ],
        "other issuer": [await other.mint(serving.url), /issued by http:\/\/127\.0\.0\.1:\d+, not/],
        "bad signature": [
          `${good.slice(0, -4)}${good.slice(-4) === "AAAA" ? "BBBB" : "AAAA"}`,
          /signature does not verify/
        ],
        "opaque token, JWKS mode": [await as.mint("https://opaque.example/mcp"), /not a signed JWT/]
      }
      for (const [what, [token, why]] of Object.entries(refusals)) {
        const answer = await post(serving, token)
        expect(answer.status, what).toBe(401)
        expect(answer.challenge, what).toMatch(
          /^Bearer resource_metadata="[^"]+", error="invalid_token", error_description="/
        )
        expect(answer.body, what).toMatch(why)
      }
      const short = await as.mint(serving.url, { clientId: "short" })
      const exp = decodeJwt(short).exp!
      while (Math.floor(Date.now() / 1000) <= exp) await new Promise((r) => setTimeout(r, 250))
      const expired = await post(serving, short)
      expect(expired.status).toBe(401)
      expect(expired.body).toContain("the token has expired")

      expect((await post(serving, good)).status).toBe(200)
      const client = new Client({ name: "t", version: "1" })
      await client.connect(new StreamableHTTPClientTransport(new URL(serving.url), withToken(good)))
      expect((await client.listTools()).tools.map((t) => t.name)).toContain("ls")
      await client.close()
    } finally {
      await close()
    }
  })

  it("a JWT signed by the issuer's own key that is not an access token, or not yet valid, is refused", async () => {
    const { serving, close } = await serve()
    try {
      const now = Math.floor(Date.now() / 1000)
      const claims = { iss: as.issuer, aud: serving.url, sub: "alice", iat: now, exp: now + 600, scope: SCOPE }
      // An ID token (typ JWT) for a client whose id happened to be this URL: not an access token.
      const idToken = await post(serving, await as.sign(claims, "JWT"))
      expect(idToken.status).toBe(401)
      expect(idToken.body).toContain("not an access token")
      const early = await post(serving, await as.sign({ ...claims, nbf: now + 3600 }, "at+jwt"))
      expect(early.status).toBe(401)
      expect(early.challenge).toContain('error="invalid_token"')
      // The same claims, as an access token, get in: the refusals above are about typ and nbf alone.
      expect((await post(serving, await as.sign(claims, "at+jwt"))).status).toBe(200)
    } finally {
      await close()
    }
  })

  it("the 2026-07-28 era goes through the same door: its client gets in with the access token only", async () => {
    const { serving, close } = await serve()
    const modern = () =>
      new ModernClient(
        { name: "modern-test", version: "1.0.0" },
        { versionNegotiation: { mode: { pin: "2026-07-28" } } }
      )
    try {
      const refused = modern()
      await expect(refused.connect(new ModernTransport(new URL(serving.url)))).rejects.toThrow(/401|[Uu]nauthorized/)
      const client = modern()
      await client.connect(new ModernTransport(new URL(serving.url), withToken(await as.mint(serving.url))))
      expect(client.getNegotiatedProtocolVersion()).toBe("2026-07-28")
      expect((await client.listTools()).tools.map((t) => t.name)).toContain("ls")
      await client.close()
    } finally {
      await close()
    }
  })

  it("403 insufficient_scope for a good token without the required scope", async () => {
    const { serving, close } = await serve({ scopes: ["mcp:admin"] })
    try {
      const narrow = await post(serving, await as.mint(serving.url, { scope: SCOPE }))
      expect(narrow.status).toBe(403)
      expect(narrow.challenge).toContain('error="insufficient_scope"')
      expect(narrow.challenge).toContain('scope="mcp:admin"')
      expect((await post(serving, await as.mint(serving.url, { scope: `${SCOPE} mcp:admin` }))).status).toBe(200)
    } finally {
      await close()
    }
  })

  it("introspection: an opaque token for this resource gets in; for another, or unknown, is 401", async () => {
    const { serving, close } = await serve({ audience: "https://opaque.example/mcp", introspection: RS_CLIENT })
    try {
      // The resource is the public name behind a proxy: requests naming it are this server's.
      const host = { host: "opaque.example" }
      const good = await as.mint("https://opaque.example/mcp")
      expect((await post(serving, good, host)).status).toBe(200)
      const elsewhere = await post(serving, await as.mint("https://elsewhere.example/mcp"), host)
      expect(elsewhere.status, elsewhere.body).toBe(401)
      expect(elsewhere.body).toContain(
        "is for https://elsewhere.example/mcp, not this server (https://opaque.example/mcp)"
      )
      // A JWT this issuer will not introspect is refused, saying so.
      const jwt = await post(serving, await as.mint(serving.url), host)
      expect(jwt.status).toBe(401)
      expect(jwt.body).toContain("would not introspect the token")
      const unknown = await post(serving, "Qa7jU6s63sDE0MOLScWRK6Yxl1hOaJyNIKghVXP-3OE", host)
      expect(unknown.status).toBe(401)
      expect(unknown.body).toContain("not active")
      // A wrong introspection secret cannot decide: refused, not let in.
      const { serving: misconfigured, close: closeMis } = await serve({
        audience: "https://opaque.example/mcp",
        introspection: { ...RS_CLIENT, clientSecret: "wrong-secret-0123456789" }
      })
      try {
        const refused = await post(misconfigured, good, host)
        expect(refused.status).toBe(503)
        expect(refused.body).toContain("introspection answered 401")
      } finally {
        await closeMis()
      }
    } finally {
      await close()
    }
  })

  it("an issuer that cannot be reached refuses every token (503), and a token never gets in without a check", async () => {
    const { serving, close } = await serve({ issuer: "http://127.0.0.1:1" })
    try {
      const answer = await post(serving, await as.mint(serving.url))
      expect(answer.status).toBe(503)
      expect(answer.body).toContain("cannot reach the authorization server")
    } finally {
      await close()
    }
  })

  it("the CLI: --auth oauth needs --issuer, says where the metadata is, and checks tokens", async () => {
    const bad = spawnSync(process.execPath, [MAIN, "mcp", "--http", "0", "--auth", "oauth", "--root", root], {
      encoding: "utf8",
      timeout: 90_000
    })
    expect(bad.status, bad.stderr).toBe(2)
    expect(bad.stderr).toContain("--auth oauth needs --issuer")
    const stray = spawnSync(process.execPath, [MAIN, "mcp", "--http", "0", "--issuer", as.issuer, "--root", root], {
      encoding: "utf8",
      timeout: 90_000
    })
    expect(stray.status, stray.stderr).toBe(2)
    expect(stray.stderr).toContain("--issuer applies to --auth oauth")

    const child = spawn(
      process.execPath,
      [MAIN, "mcp", "--http", "0", "--auth", "oauth", "--issuer", as.issuer, "--scope", SCOPE, "--root", root],
      {
        stdio: ["ignore", "ignore", "pipe"]
      }
    )
    try {
      const url = await new Promise<string>((resolve, reject) => {
        let err = ""
        child.stderr.on("data", (b: Buffer) => {
          err += b.toString()
          const found = err.match(/at (http:\/\/[^\s;]+\/mcp)/)?.[1]
          if (found !== undefined && err.includes("metadata at")) resolve(found)
        })
        child.on("exit", (code) => reject(new Error(`exited ${code}: ${err}`)))
      })
      const serving = { url } as HttpServing
      expect((await post(serving)).status).toBe(401)
      expect((await post(serving, await as.mint(url))).status).toBe(200)
    } finally {
      child.kill("SIGTERM")
    }
  }, 200_000)
})
