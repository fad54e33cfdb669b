/**
 * Logging in to a remote MCP server that asks for OAuth (`mcp-auth`), against a real
 * authorization server run here (oidc-provider) and our own `mcp --http --auth oauth` as the
 * server: discovery from the 401, dynamic registration or a Client ID Metadata Document, PKCE,
 * the person's return to a loopback listener, tokens saved 0600 and used by the background
 * connection, refreshed before they end and when the server refuses them, a missing login named with
 * the command to run, logout revoking the refresh token; and the CLI end to end, printing the
 * URL and never a token.
 */
import { spawn } from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Scope } from "effect"
import { testToolSystem } from "../../../layers/test.ts"
import { login, loginStatus, logout } from "../../../src/mcp/auth/login.ts"
import { loginFile, readLogin, writeLogin } from "../../../src/mcp/auth/token-store.ts"
import { McpClients } from "../../../src/mcp/clients.ts"
import type { McpServers } from "../../../src/mcp/config.ts"
import { type HttpServing, serveHttp } from "../../../src/mcp/transports.ts"
import { LsTool } from "../../../src/tools/ls.ts"
import { REPO, systemWithMcp } from "../helpers.ts"
import { type AuthorizationServer, logIn, SCOPE, startAuthorizationServer } from "./authorization-server.ts"

/** What a login asks for: the scope the server names, and offline_access for a refresh token. */
const ASKED = `${SCOPE} offline_access`

const MAIN = NodePath.join(REPO, "src/cli/main.ts")
const tmp = NodeFs.realpathSync(NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "freecode-oauth-client-")))
const root = NodePath.join(tmp, "project")
NodeFs.mkdirSync(root)
NodeFs.writeFileSync(NodePath.join(root, "notes.txt"), "alpha\n")
// The background connection finds saved logins in the state folder, as the CLI does.
const stateDir = NodePath.join(tmp, "state")
process.env.FREECODE_STATE_DIR = stateDir

const CIMD_URL = "https://freecode.test/freecode-tools/oauth-client.json"
const shipped = JSON.parse(NodeFs.readFileSync(NodePath.join(REPO, "docs/oauth-client-metadata.json"), "utf8"))

let as: AuthorizationServer
let serving: HttpServing
let scope: Scope.Closeable
beforeAll(async () => {
  // The metadata document a team hosts: the shipped one, at its URL.
  as = await startAuthorizationServer({
    clientMetadata: (url) => (url === CIMD_URL ? { ...shipped, client_id: CIMD_URL } : undefined)
  })
  scope = Effect.runSync(Scope.make())
  serving = await Effect.runPromise(
    Effect.gen(function* () {
      const system = yield* Layer.build(testToolSystem({ root, tools: [LsTool] }))
      return yield* serveHttp(system, 0, { auth: { kind: "oauth", issuer: as.issuer, scopes: [SCOPE] } })
    }).pipe(Scope.provide(scope))
  )
}, 60_000)
afterAll(async () => {
  if (scope !== undefined) await Effect.runPromise(Scope.close(scope, Effect.void as never))
  await as?.close()
})

/** The person's browser: opens the URL, logs in, and follows the redirect back to our listener. */
const browser = () => {
  const done: { promise?: Promise<void>; url?: URL } = {}
  return {
    done,
    open: (url: URL) => {
      done.url = url
      done.promise = logIn(url.href).then(async (back) => void (await (await fetch(back)).text()))
    }
  }
}

/** Runs the CLI without blocking this process (whose authorization server it may call). */
const runCli = (args: ReadonlyArray<string>, env: NodeJS.ProcessEnv) =>
  new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve) => {
    const child = spawn(process.execPath, [MAIN, ...args], { env, stdio: ["ignore", "pipe", "pipe"] })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (b: Buffer) => (stdout += b.toString()))
    child.stderr.on("data", (b: Buffer) => (stderr += b.toString()))
    child.on("close", (status) => resolve({ status, stdout, stderr }))
  })

/** Connects in the background as a session would, and says how it went. */
const connect = (servers: McpServers) =>
  Effect.runPromise(
    Effect.gen(function* () {
      const clients = yield* McpClients
      yield* clients.ready
      return (yield* clients.status)[0]!
    }).pipe(Effect.provide(systemWithMcp({ servers, root })), Effect.scoped)
  )

describe("mcp-auth: logging in to a server that asks for OAuth", () => {
  it("discovery from the 401, dynamic registration, PKCE: tokens saved 0600 and used by the connection", async () => {
    const person = browser()
    const result = await login({ stateDir, serverUrl: serving.url, name: "team", open: person.open })
    await person.done.promise
    expect(result.kind).toBe("logged-in")
    // The person was sent to the issuer, with PKCE and this server as the resource.
    const sent = person.done.url!
    expect(sent.origin).toBe(as.issuer)
    expect(sent.searchParams.get("code_challenge_method")).toBe("S256")
    expect(sent.searchParams.get("resource")).toBe(serving.url)
    // The scope the server's 401 names, and offline_access, which the authorization server
    // offers: asked for so that a refresh token comes back (SDK 2.x, the 2026-07-28 revision).
    expect(sent.searchParams.get("scope")).toBe(ASKED)

    const file = loginFile(stateDir, serving.url)
    expect(NodeFs.statSync(file).mode & 0o777).toBe(0o600)
    expect(NodeFs.statSync(NodePath.dirname(file)).mode & 0o777).toBe(0o700)
    const status = loginStatus(stateDir, serving.url)
    expect(status).toMatchObject({ loggedIn: true, issuer: as.issuer, refreshable: true, scope: SCOPE })
    expect(status.clientId).not.toBe(CIMD_URL)

    const connected = await connect({ team: { url: serving.url } })
    expect(connected.error).toBeUndefined()
    expect(connected.state).toBe("connected")
    expect(connected.tools).toEqual(["mcp__team__ls"])
  }, 60_000)

  it("an access token the server refuses is refreshed with the refresh token, and the connection goes on", async () => {
    const entry = readLogin(stateDir, serving.url)!
    const before = entry.tokens!
    writeLogin(stateDir, serving.url, { ...entry, tokens: { ...before, access_token: "expired-or-revoked" } })
    const connected = await connect({ team: { url: serving.url } })
    expect(connected.state).toBe("connected")
    const after = readLogin(stateDir, serving.url)!.tokens!
    expect(after.access_token).not.toBe("expired-or-revoked")
    expect(after.access_token).not.toBe(before.access_token)
  }, 60_000)

  it("an access token about to end is refreshed before it is sent, and the new one saved 0600", async () => {
    const entry = readLogin(stateDir, serving.url)!
    const before = entry.tokens!
    expect(before.expires_in).toBeGreaterThan(0)
    // Saved so long ago that, by its own expires_in, it has ended (the server would still take it:
    // only a refresh ahead of use changes it).
    writeLogin(stateDir, serving.url, { ...entry, savedAt: Date.now() - (before.expires_in! + 5) * 1000 })
    const connected = await connect({ team: { url: serving.url } })
    expect(connected.error).toBeUndefined()
    expect(connected.state).toBe("connected")
    const after = readLogin(stateDir, serving.url)!
    expect(after.tokens!.access_token).not.toBe(before.access_token)
    expect(after.savedAt).toBeGreaterThan(Date.now() - 120_000)
    expect(loginStatus(stateDir, serving.url).expiresAt).toBeGreaterThan(Date.now())
    expect(NodeFs.statSync(loginFile(stateDir, serving.url)).mode & 0o777).toBe(0o600)
  }, 60_000)

  it("without a login the connection fails naming the command to run, and registers nothing", async () => {
    const saved = readLogin(stateDir, serving.url)
    writeLogin(stateDir, serving.url, undefined)
    try {
      const failed = await connect({ team: { url: serving.url } })
      expect(failed.state).toBe("failed")
      expect(failed.error).toContain("team needs a login")
      expect(failed.error).toContain("freecode-tools mcp-auth login team")
      expect(readLogin(stateDir, serving.url)?.clientInformation).toBeUndefined()
    } finally {
      writeLogin(stateDir, serving.url, saved)
    }
  }, 60_000)

  it("a server that answers 401 but publishes no OAuth metadata (a token server) is said to want its token in headers", async () => {
    const tokenScope = Effect.runSync(Scope.make())
    try {
      const tokenServer = await Effect.runPromise(
        Effect.gen(function* () {
          const system = yield* Layer.build(testToolSystem({ root, tools: [LsTool] }))
          return yield* serveHttp(system, 0)
        }).pipe(Scope.provide(tokenScope))
      )
      const failed = await connect({ plain: { url: tokenServer.url } })
      expect(failed.state).toBe("failed")
      expect(failed.error).toContain("plain answered 401 and publishes no OAuth metadata")
      expect(NodeFs.existsSync(loginFile(stateDir, tokenServer.url))).toBe(false)
    } finally {
      await Effect.runPromise(Scope.close(tokenScope, Effect.void as never))
    }
  }, 60_000)

  it("a refresh the issuer refuses (the refresh token revoked) ends in the login being asked for", async () => {
    const saved = readLogin(stateDir, serving.url)!
    const revoked = await fetch(`${as.issuer}/token/revocation`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({
        token: saved.tokens!.refresh_token!,
        client_id: saved.clientInformation!.client_id
      })
    })
    expect(revoked.ok).toBe(true)
    writeLogin(stateDir, serving.url, { ...saved, tokens: { ...saved.tokens!, access_token: "expired-or-revoked" } })
    const failed = await connect({ team: { url: serving.url } })
    expect(failed.state).toBe("failed")
    expect(failed.error).toContain("refused to refresh the saved login")
    expect(failed.error).toContain("freecode-tools mcp-auth login team")
    expect(readLogin(stateDir, serving.url)?.tokens).toBeUndefined()
  }, 60_000)

  it("a refresh ahead of use that the issuer refuses: the connection fails saying so and naming the login command", async () => {
    const person = browser()
    await login({ stateDir, serverUrl: serving.url, name: "team", open: person.open })
    await person.done.promise
    const saved = readLogin(stateDir, serving.url)!
    const revoked = await fetch(`${as.issuer}/token/revocation`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({
        token: saved.tokens!.refresh_token!,
        client_id: saved.clientInformation!.client_id
      })
    })
    expect(revoked.ok).toBe(true)
    writeLogin(stateDir, serving.url, { ...saved, savedAt: Date.now() - (saved.tokens!.expires_in! + 5) * 1000 })
    const failed = await connect({ team: { url: serving.url } })
    expect(failed.state).toBe("failed")
    expect(failed.error).toContain("team needs a login (its authorization server refused to refresh the saved login)")
    expect(failed.error).toContain("run `freecode-tools mcp-auth login team`")
    expect(readLogin(stateDir, serving.url)?.tokens).toBeUndefined()
  }, 60_000)

  it("a Client ID Metadata Document: the client id is its URL, and the server reads the shipped document", async () => {
    const other = NodePath.join(tmp, "state-cimd")
    const person = browser()
    const result = await login({
      stateDir: other,
      serverUrl: serving.url,
      name: "team",
      settings: { clientMetadataUrl: CIMD_URL },
      open: person.open
    })
    await person.done.promise
    expect(result.kind).toBe("logged-in")
    expect(person.done.url!.searchParams.get("client_id")).toBe(CIMD_URL)
    expect(loginStatus(other, serving.url)).toMatchObject({ loggedIn: true, clientId: CIMD_URL })
  }, 60_000)

  it("logout revokes the refresh token at the issuer and forgets the login", async () => {
    const other = NodePath.join(tmp, "state-logout")
    const person = browser()
    await login({ stateDir: other, serverUrl: serving.url, name: "team", open: person.open })
    await person.done.promise
    const entry = readLogin(other, serving.url)!
    const out = await logout(other, serving.url)
    expect(out).toEqual({ had: true, revoked: true })
    expect(NodeFs.existsSync(loginFile(other, serving.url))).toBe(false)
    expect(loginStatus(other, serving.url).loggedIn).toBe(false)
    const reuse = await fetch(`${as.issuer}/token`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({
        grant_type: "refresh_token",
        refresh_token: entry.tokens!.refresh_token!,
        client_id: entry.clientInformation!.client_id
      })
    })
    expect(((await reuse.json()) as { error?: string }).error).toBe("invalid_grant")
    expect(await logout(other, serving.url)).toEqual({ had: false, revoked: false })
  }, 60_000)

  it("the CLI: mcp-auth login prints the URL, waits for the person, and never prints a token; status and logout", async () => {
    const other = NodePath.join(tmp, "state-cli")
    NodeFs.writeFileSync(
      NodePath.join(root, ".mcp.json"),
      JSON.stringify({ mcpServers: { team: { url: serving.url } } })
    )
    const env = { ...process.env, FREECODE_STATE_DIR: other }
    const child = spawn(process.execPath, [MAIN, "mcp-auth", "login", "team", "--root", root, "--timeout", "120"], {
      env,
      stdio: ["ignore", "pipe", "pipe"]
    })
    let out = ""
    let err = ""
    child.stdout.on("data", (b: Buffer) => (out += b.toString()))
    const exited = new Promise<number | null>((resolve) => child.on("exit", resolve))
    const url = await new Promise<string>((resolve, reject) => {
      child.stderr.on("data", (b: Buffer) => {
        err += b.toString()
        const found = err.match(/^ {2}(http\S+)$/m)?.[1]
        if (found !== undefined) resolve(found)
      })
      void exited.then((code) => reject(new Error(`exited ${code} before printing a URL: ${err}`)))
    })
    expect(err).toContain("Open this URL in a browser to log in to team")
    await (await fetch(await logIn(url))).text()
    expect(await exited, err).toBe(0)
    expect(out).toMatch(
      new RegExp(
        `^Logged in to team \\(scope ${SCOPE}\\); the access token ends at \\S+Z and is refreshed as needed\\.\n$`
      )
    )
    const tokens = readLogin(other, serving.url)!.tokens!
    for (const secret of [tokens.access_token, tokens.refresh_token!]) {
      expect(out).not.toContain(secret)
      expect(err).not.toContain(secret)
    }
    // Not spawnSync: the authorization server the logout revokes at runs in this process.
    const status = await runCli(["mcp-auth", "status", "--root", root], env)
    expect(status.status, status.stderr).toBe(0)
    expect(status.stdout).toMatch(
      new RegExp(`^team: logged in at ${as.issuer} \\(scope ${SCOPE}\\); access token ends \\S+Z, refreshable\n$`)
    )
    expect(status.stdout).not.toContain(tokens.access_token)
    const logoutRun = await runCli(["mcp-auth", "logout", "team", "--root", root], env)
    expect(logoutRun.status, logoutRun.stderr).toBe(0)
    expect(logoutRun.stdout).toBe(
      "Logged out of team: the saved login is gone and the authorization server revoked the token.\n"
    )
    const after = await runCli(["mcp-auth", "status", "team", "--root", root], env)
    expect(after.stdout).toBe("team: not logged in\n")
    NodeFs.rmSync(NodePath.join(root, ".mcp.json"))
  }, 180_000)

  it("mcp-auth refuses to send a login over plain http to another machine, and a stdio server", async () => {
    NodeFs.writeFileSync(
      NodePath.join(root, ".mcp.json"),
      JSON.stringify({
        // biome-ignore lint/suspicious/noTemplateCurlyInString: a config's ${VAR}, expanded by mcp-auth
        mcpServers: { far: { url: "http://${FAR_HOST}/mcp" }, local: { command: "true" } }
      })
    )
    try {
      const env = { ...process.env, FAR_HOST: "mcp.example.com" }
      const far = await runCli(["mcp-auth", "login", "far", "--root", root], env)
      expect(far.status).toBe(2)
      expect(far.stderr).toContain("far: http://mcp.example.com/mcp: log in over https only")
      const local = await runCli(["mcp-auth", "login", "local", "--root", root], env)
      expect(local.status).toBe(2)
      expect(local.stderr).toContain("local is a stdio server")
    } finally {
      NodeFs.rmSync(NodePath.join(root, ".mcp.json"))
    }
  }, 120_000)

  it("the return listener refuses another login's state, and a refusal by the person ends the login saying so", async () => {
    const other = NodePath.join(tmp, "state-refusal")
    const answers: Array<number> = []
    let person: Promise<void> = Promise.resolve()
    const refused = login({
      stateDir: other,
      serverUrl: serving.url,
      name: "team",
      open: (url) => {
        const back = new URL(url.searchParams.get("redirect_uri")!)
        const state = url.searchParams.get("state")!
        const forged = new URL(back)
        forged.search = new URLSearchParams({ state: "someone-else", code: "stolen" }).toString()
        const denied = new URL(back)
        denied.search = new URLSearchParams({ state, error: "access_denied", error_description: "no" }).toString()
        person = (async () => {
          answers.push((await fetch(forged)).status)
          answers.push((await fetch(denied)).status)
        })()
      }
    })
    await expect(refused).rejects.toThrow("the authorization server refused: access_denied (no)")
    await person
    expect(answers).toEqual([400, 400])
    expect(loginStatus(other, serving.url).loggedIn).toBe(false)
  }, 60_000)

  it("a saved login others can read is refused, not used", async () => {
    const other = NodePath.join(tmp, "state-mode")
    writeLogin(other, serving.url, { server: serving.url, tokens: { access_token: "x", token_type: "Bearer" } })
    NodeFs.chmodSync(loginFile(other, serving.url), 0o644)
    expect(() => loginStatus(other, serving.url)).toThrow(/can be read by others/)
  })
})
