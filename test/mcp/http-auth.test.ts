/**
 * What `mcp --http` checks before it reads a request: the bearer token (missing, wrong, right;
 * `--auth none` only on loopback; `--token-file`) and the size of the body (413 past the cap,
 * with nothing past it kept, whether the client declares its length or streams it chunked).
 */
import { spawnSync } from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodeHttp from "node:http"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { Effect, Layer } from "effect"
import { testToolSystem } from "../../layers/test.ts"
import { isLoopback, MAX_REQUEST_BYTES } from "../../src/mcp/http-guard.ts"
import { type HttpOptions, serveHttp } from "../../src/mcp/transports.ts"
import { LsTool } from "../../src/tools/ls.ts"
import { REPO, startHttp, withToken } from "./helpers.ts"

const MAIN = NodePath.join(REPO, "src/cli/main.ts")
const root = NodeFs.realpathSync(NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "freecode-http-auth-")))
NodeFs.writeFileSync(NodePath.join(root, "notes.txt"), "alpha\n")

const INIT = JSON.stringify({
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "t", version: "1" } }
})

const serve = (options: HttpOptions = {}) =>
  Effect.gen(function* () {
    const system = yield* Layer.build(testToolSystem({ root, tools: [LsTool] }))
    return yield* serveHttp(system, 0, options)
  })

interface Answer {
  readonly status: number
  readonly headers: NodeHttp.IncomingHttpHeaders
  readonly body: string
}

const post = (url: string, headers: Record<string, string>, body: string) =>
  Effect.promise(
    () =>
      new Promise<Answer>((resolve, reject) => {
        const req = NodeHttp.request(url, {
          method: "POST",
          headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...headers }
        })
        req.on("response", (res) => {
          let text = ""
          res.on("data", (b: Buffer) => (text += b.toString()))
          res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }))
        })
        req.on("error", reject)
        req.end(body)
      })
  )

/**
 * Streams zeros as a chunked body, 64 KiB at a time, until the server answers or cuts the
 * connection; how many bytes went out says whether the server kept reading.
 */
const streamUntilAnswered = (url: string, token: string) =>
  Effect.promise(
    () =>
      new Promise<{ status: number; sent: number }>((resolve) => {
        const chunk = Buffer.alloc(64 * 1024)
        let sent = 0
        let status = 0
        let done = false
        const finish = () => {
          if (done) return
          done = true
          resolve({ status, sent })
        }
        const req = NodeHttp.request(url, {
          method: "POST",
          headers: { "content-type": "application/json", authorization: `Bearer ${token}` }
        })
        req.on("response", (res) => {
          status = res.statusCode ?? 0
          res.resume()
          res.on("end", finish)
          req.destroy()
        })
        req.on("error", finish)
        req.on("close", finish)
        const pump = () => {
          // A bound against a server that never stops reading: 8 times the cap.
          while (!done && sent < 8 * MAX_REQUEST_BYTES) {
            sent += chunk.length
            if (!req.write(chunk)) return void req.once("drain", pump)
          }
          if (!done) req.end()
        }
        pump()
      })
  )

describe("mcp --http: the token", () => {
  it.live("a request without the token or with a wrong one is 401 with WWW-Authenticate; the right one gets in", () =>
    Effect.gen(function* () {
      const serving = yield* serve()
      if (serving.auth.kind !== "token") throw new Error("serveHttp serves with a token by default")
      const token = serving.auth.token
      expect(token).toMatch(/^[A-Za-z0-9_-]{16,}$/)

      const missing = yield* post(serving.url, {}, INIT)
      expect(missing.status).toBe(401)
      expect(missing.headers["www-authenticate"]).toBe('Bearer realm="freecode-tools"')
      expect(missing.body).toContain("Authorization: Bearer <token>")

      for (const wrong of [`${token}x`, token.slice(0, -1), "A".repeat(token.length), `Basic ${token}`]) {
        const answer = yield* post(
          serving.url,
          { authorization: wrong.startsWith("Basic") ? wrong : `Bearer ${wrong}` },
          INIT
        )
        expect(answer.status).toBe(401)
        expect(answer.headers["www-authenticate"]).toMatch(/^Bearer realm="freecode-tools"/)
      }
      expect(
        (yield* post(serving.url, { authorization: `Bearer ${token}x` }, INIT)).headers["www-authenticate"]
      ).toContain('error="invalid_token"')
      // A GET stream and a DELETE need it as well: every method on every path.
      const get = yield* Effect.promise(() => fetch(serving.url, { headers: { accept: "text/event-stream" } }))
      expect(get.status).toBe(401)
      const other = yield* Effect.promise(() => fetch(new URL("/elsewhere", serving.url), { method: "DELETE" }))
      expect(other.status).toBe(401)

      expect((yield* post(serving.url, { authorization: `Bearer ${token}` }, INIT)).status).toBe(200)
      // The SDK client with the header does a whole session.
      const client = new Client({ name: "t", version: "1" })
      yield* Effect.promise(() =>
        client.connect(new StreamableHTTPClientTransport(new URL(serving.url), withToken(token)))
      )
      const listed = yield* Effect.promise(() => client.listTools())
      expect(listed.tools.map((t) => t.name)).toContain("ls")
      yield* Effect.promise(() => client.close())
    }).pipe(Effect.scoped)
  )

  it.live(
    "--auth none is refused on an address that is not loopback, by the library as by the CLI",
    () =>
      Effect.gen(function* () {
        const refused = yield* Effect.flip(serve({ host: "0.0.0.0", auth: { kind: "none" } }))
        expect(refused.message).toContain("loopback address only")
        const named = yield* Effect.flip(serve({ host: "localhost" }))
        expect(named.message).toContain("not an IP address")
        for (const host of ["0.0.0.0", "::ffff:10.0.0.1"]) {
          const cli = spawnSync(process.execPath, [MAIN, "mcp", "--http", "0", "--host", host, "--auth", "none"], {
            encoding: "utf8",
            timeout: 90_000
          })
          expect(cli.status, cli.stderr).toBe(2)
          expect(cli.stderr).toContain("--auth none is allowed on a loopback address only")
        }
        expect(["127.0.0.1", "127.1.2.3", "::1", "::ffff:127.0.0.1", "0:0:0:0:0:0:0:1"].every(isLoopback)).toBe(true)
        expect(["0.0.0.0", "::", "10.0.0.1", "localhost", "::ffff:10.0.0.1", "128.0.0.1"].some(isLoopback)).toBe(false)
      }).pipe(Effect.scoped),
    200_000
  )

  it("--auth none on loopback says so on stderr and lets a request in without a token", async () => {
    const server = await startHttp(MAIN, ["mcp", "--http", "0", "--auth", "none", "--root", root])
    try {
      expect(server.token).toBeUndefined()
      expect(server.stderr()).toContain("--auth none: no token")
      const answer = await Effect.runPromise(post(server.url, {}, INIT))
      expect(answer.status).toBe(200)
    } finally {
      server.child.kill("SIGTERM")
    }
  }, 90_000)

  it("--token-file: that token gets in, it is not printed, and a bad file is refused", async () => {
    const file = NodePath.join(root, "token")
    const token = "a-token_from-a-file-0123456789"
    NodeFs.writeFileSync(file, `${token}\n`, { mode: 0o600 })
    const server = await startHttp(MAIN, ["mcp", "--http", "0", "--token-file", file, "--root", root])
    try {
      expect(server.stderr()).not.toContain(token)
      expect(server.stderr()).toContain(`must send the token in ${file}`)
      expect((await Effect.runPromise(post(server.url, {}, INIT))).status).toBe(401)
      expect((await Effect.runPromise(post(server.url, { authorization: `Bearer ${token}` }, INIT))).status).toBe(200)
    } finally {
      server.child.kill("SIGTERM")
    }
    for (const bad of ["short", "two\nlines-of-token-text"]) {
      NodeFs.writeFileSync(file, bad)
      const cli = spawnSync(process.execPath, [MAIN, "mcp", "--http", "0", "--token-file", file], {
        encoding: "utf8",
        timeout: 90_000
      })
      expect(cli.status, cli.stderr).toBe(2)
      expect(cli.stderr).toContain("a token must be at least 16 characters")
    }
    const missing = spawnSync(process.execPath, [MAIN, "mcp", "--http", "0", "--token-file", `${file}.absent`], {
      encoding: "utf8",
      timeout: 90_000
    })
    expect(missing.status).toBe(2)
    expect(missing.stderr).toContain("cannot read it")
  }, 300_000)
})

describe("mcp --http: the size of a request", () => {
  it.live("a body over the cap is 413 before it is read: declared, streamed chunked, or after a right token only", () =>
    Effect.gen(function* () {
      const serving = yield* serve()
      if (serving.auth.kind !== "token") throw new Error("serveHttp serves with a token by default")
      const auth = { authorization: `Bearer ${serving.auth.token}` }
      const big = " ".repeat(MAX_REQUEST_BYTES + 1)

      const declared = yield* post(serving.url, auth, big)
      expect(declared.status).toBe(413)
      expect(declared.body).toContain(`at most ${MAX_REQUEST_BYTES} bytes`)
      // Without the token the body is not even looked at.
      expect((yield* post(serving.url, {}, big)).status).toBe(401)

      // Chunked: no length to refuse on, so the server stops keeping the body once past the cap,
      // answers 413, and cuts the connection after twice as much again, rather than taking all
      // eight times the cap. (A client that is slow to read may see the cut before the answer.)
      const streamed = yield* streamUntilAnswered(serving.url, serving.auth.token)
      expect([413, 0]).toContain(streamed.status)
      expect(streamed.sent).toBeLessThan(8 * MAX_REQUEST_BYTES)

      // Just under the cap is read (and answered as the JSON-RPC it is, or is not).
      const under = yield* post(serving.url, auth, INIT + " ".repeat(MAX_REQUEST_BYTES - INIT.length))
      expect(under.status).toBe(200)
      // The server still answers afterwards.
      expect((yield* post(serving.url, auth, INIT)).status).toBe(200)
    }).pipe(Effect.scoped)
  )

  it.live("an embedder's own cap holds the same way", () =>
    Effect.gen(function* () {
      const serving = yield* serve({ maxRequestBytes: 1024 })
      if (serving.auth.kind !== "token") throw new Error("serveHttp serves with a token by default")
      const auth = { authorization: `Bearer ${serving.auth.token}` }
      expect((yield* post(serving.url, auth, " ".repeat(1025))).status).toBe(413)
      expect((yield* post(serving.url, auth, INIT)).status).toBe(200)
    }).pipe(Effect.scoped)
  )
})
