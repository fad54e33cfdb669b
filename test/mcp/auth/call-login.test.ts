/**
 * Logins a server asks for after the first request, against a real authorization server
 * (oidc-provider) and our own `mcp --http` behind a real protected-resource gate (gate.ts): a
 * call refused with 401 names the command to run and the scope, typed; the login that follows
 * asks for that scope although the server's first request is open; a 403 for a wider scope
 * leads to a login asking for the union; a 403 for no more than the last login asked for says a
 * login will not help; an authorization server that moved means registering again there; a
 * client registered by hand logs in with its secret, read from an env var or a file and never
 * saved nor shown.
 */
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Effect, Scope } from "effect"
import { Dispatcher } from "../../../src/dispatch/dispatcher.ts"
import { ClientSecretError, oauthSettingsOf } from "../../../src/mcp/auth/client-secret.ts"
import { login, loginStatus } from "../../../src/mcp/auth/login.ts"
import { loginFile, readLogin, updateLogin } from "../../../src/mcp/auth/token-store.ts"
import { McpClients } from "../../../src/mcp/clients.ts"
import type { McpServers } from "../../../src/mcp/config.ts"
import { systemWithMcp } from "../helpers.ts"
import {
  type AuthorizationServer,
  HANDMADE,
  handmadeClient,
  logIn,
  SCOPE,
  startAuthorizationServer
} from "./authorization-server.ts"
import { type Gate, startGatedLs } from "./gate.ts"

const tmp = NodeFs.realpathSync(NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "freecode-call-login-")))
const root = NodePath.join(tmp, "project")
NodeFs.mkdirSync(root)
NodeFs.writeFileSync(NodePath.join(root, "notes.txt"), "alpha\n")
const stateDir = NodePath.join(tmp, "state")
process.env.FREECODE_STATE_DIR = stateDir

let as: AuthorizationServer
let as2: AuthorizationServer
let gate: Gate
let scope: Scope.Closeable
beforeAll(async () => {
  as = await startAuthorizationServer({ clients: [handmadeClient] })
  as2 = await startAuthorizationServer()
  scope = Effect.runSync(Scope.make())
  gate = await startGatedLs(root, as.issuer, scope)
}, 60_000)
afterAll(async () => {
  await gate?.close()
  if (scope !== undefined) await Effect.runPromise(Scope.close(scope, Effect.void as never))
  await as?.close()
  await as2?.close()
})

/** The person: told the URL, logs in there, and comes back to our listener. Returns what they were sent to. */
const logInAs = async (name: string, settings?: Parameters<typeof login>[0]["settings"], dir = stateDir) => {
  let sent: URL | undefined
  let done: Promise<void> | undefined
  const result = await login({
    stateDir: dir,
    serverUrl: gate.url,
    name,
    ...(settings === undefined ? {} : { settings }),
    open: (url) => {
      sent = url
      done = logIn(url.href).then(async (back) => void (await (await fetch(back)).text()))
    }
  })
  await done
  return { result, sent: sent! }
}

/** Connects as a session does and calls `ls` once; what the model would be given. */
const callLs = (servers: McpServers) =>
  Effect.runPromise(
    Effect.gen(function* () {
      const clients = yield* McpClients
      yield* clients.ready
      const dispatcher = yield* Dispatcher
      return yield* dispatcher.dispatch(
        { id: `c_${Math.random().toString(36).slice(2)}`, name: "mcp__team__ls", args: {} },
        { sessionId: "s", approve: () => Effect.succeed(true) }
      )
    }).pipe(Effect.provide(systemWithMcp({ servers, root })), Effect.scoped)
  )

const scopesOf = (url: URL) => (url.searchParams.get("scope") ?? "").split(" ")

describe("logins asked for on a call", () => {
  it("a call refused with 401 names the command and the scope, typed; the login asks for that scope though the first request is open", async () => {
    gate.rule = (method) => (method === "tools/call" ? [SCOPE] : undefined)
    const refused = await callLs({ team: { url: gate.url } })
    expect(refused.status).toBe("error")
    expect(refused.modelOutput).toContain(`team needs a login`)
    expect(refused.modelOutput).toContain(`it asks for scope "${SCOPE}"`)
    expect(refused.modelOutput).toContain("run `freecode-tools mcp-auth login team`")
    expect(refused.metadata.login).toEqual({
      server: "team",
      kind: "login",
      command: "freecode-tools mcp-auth login team",
      scope: SCOPE
    })
    expect(gate.refusals.at(-1)).toEqual({ status: 401, method: "tools/call" })

    const { result, sent } = await logInAs("team")
    expect(result.kind).toBe("logged-in")
    expect(sent.origin).toBe(as.issuer)
    expect(scopesOf(sent)).toContain(SCOPE)
    // What the server asked for is asked for now; nothing is left pending.
    expect(readLogin(stateDir, gate.url)?.wanted).toBeUndefined()

    const ok = await callLs({ team: { url: gate.url } })
    expect([ok.status, ok.modelOutput]).toEqual(["ok", expect.stringContaining("notes.txt")])
  }, 90_000)

  it("a login saved before registrations carried their issuer still refreshes in the background (the stamp is no new registration)", async () => {
    const entry = readLogin(stateDir, gate.url)!
    const { issuer: _stamp, ...unstamped } = entry.clientInformation as { issuer?: string; client_id: string }
    updateLogin(stateDir, gate.url, (e) => ({
      ...e,
      clientInformation: unstamped,
      tokens: { ...e.tokens!, access_token: "refused-by-the-gate" }
    }))
    const ok = await callLs({ team: { url: gate.url } })
    expect(ok.status).toBe("ok")
    const after = readLogin(stateDir, gate.url)!
    expect(after.clientInformation?.client_id).toBe(unstamped.client_id)
    expect(after.tokens?.access_token).not.toBe("refused-by-the-gate")
  }, 90_000)

  it("a 403 for a scope the last login already asked for says a login will not help, and gives no command", async () => {
    gate.rule = (method) => (method === "tools/call" ? [SCOPE, "mcp:admin"] : undefined)
    // As if the last login had asked for mcp:admin and the authorization server had not granted it.
    const entry = readLogin(stateDir, gate.url)!
    updateLogin(stateDir, gate.url, (e) => ({ ...e, asked: `${SCOPE} mcp:admin offline_access` }))
    try {
      const refused = await callLs({ team: { url: gate.url } })
      expect(refused.status).toBe("error")
      expect(refused.modelOutput).toContain("logging in again will not help")
      expect(refused.metadata.login).toMatchObject({ kind: "scope-refused" })
      expect((refused.metadata.login as { command?: string }).command).toBeUndefined()
      expect(gate.refusals.at(-1)).toEqual({ status: 403, method: "tools/call" })
    } finally {
      updateLogin(stateDir, gate.url, (e) => ({ ...e, ...(entry.asked === undefined ? {} : { asked: entry.asked }) }))
    }
  }, 90_000)

  it("a 403 asking for a wider scope: the login that follows asks for the union, and the call goes through", async () => {
    gate.rule = (method) => (method === "tools/call" ? [SCOPE, "mcp:admin"] : undefined)
    const refused = await callLs({ team: { url: gate.url } })
    expect(refused.status).toBe("error")
    expect(refused.metadata.login).toMatchObject({ kind: "login", command: "freecode-tools mcp-auth login team" })
    expect((refused.metadata.login as { scope: string }).scope.split(" ")).toEqual(
      expect.arrayContaining([SCOPE, "mcp:admin"])
    )
    const { sent } = await logInAs("team")
    expect(scopesOf(sent)).toEqual(expect.arrayContaining([SCOPE, "mcp:admin"]))
    expect(loginStatus(stateDir, gate.url).scope?.split(" ")).toEqual(expect.arrayContaining([SCOPE, "mcp:admin"]))
    const ok = await callLs({ team: { url: gate.url } })
    expect(ok.status).toBe("ok")
  }, 90_000)

  it("the server's authorization server moved: the call names the new one, and the login registers again there", async () => {
    gate.rule = (method) => (method === "tools/call" ? [SCOPE] : undefined)
    const before = loginStatus(stateDir, gate.url)
    gate.issuer = as2.issuer
    try {
      const refused = await callLs({ team: { url: gate.url } })
      expect(refused.status).toBe("error")
      expect(refused.modelOutput).toContain(`its authorization server is now ${as2.issuer}`)
      expect(refused.metadata.login).toMatchObject({ kind: "login" })
      // The background registered nothing with the new server.
      expect(loginStatus(stateDir, gate.url).clientId).toBe(before.clientId)

      const { result, sent } = await logInAs("team")
      expect(result.kind).toBe("logged-in")
      expect(sent.origin).toBe(as2.issuer)
      const after = loginStatus(stateDir, gate.url)
      expect(after.issuer).toBe(as2.issuer)
      expect(after.clientId).not.toBe(before.clientId)
      const ok = await callLs({ team: { url: gate.url } })
      expect(ok.status).toBe("ok")
    } finally {
      gate.issuer = as.issuer
    }
  }, 90_000)
})

describe("a client registered by hand, with a secret", () => {
  it("logs in with the secret from an env var (client_secret_basic, as the metadata offers); the secret is never saved", async () => {
    const dir = NodePath.join(tmp, "state-handmade")
    gate.rule = (method) => (method === "tools/call" ? [SCOPE] : undefined)
    // No call has been refused yet and the server names no scope: the config's scope is asked for.
    const settings = oauthSettingsOf(
      { clientId: HANDMADE.id, clientSecretEnv: "HANDMADE_SECRET", scope: SCOPE },
      root,
      { HANDMADE_SECRET: HANDMADE.secret }
    )
    const { result, sent } = await logInAs("team", settings, dir)
    expect(result.kind).toBe("logged-in")
    expect(sent.searchParams.get("client_id")).toBe(HANDMADE.id)
    expect(loginStatus(dir, gate.url)).toMatchObject({ loggedIn: true, refreshable: true })
    expect(NodeFs.readFileSync(loginFile(dir, gate.url), "utf8")).not.toContain(HANDMADE.secret)
  }, 90_000)

  it("a wrong secret fails the login at the token endpoint, and the message does not carry it", async () => {
    const dir = NodePath.join(tmp, "state-handmade-wrong")
    const wrong = "not-the-secret-0a1b2c3d4e5f"
    const file = NodePath.join(tmp, "secret.txt")
    NodeFs.writeFileSync(file, `${wrong}\n`, { mode: 0o600 })
    const settings = oauthSettingsOf({ clientId: HANDMADE.id, clientSecretFile: file, scope: SCOPE }, root)
    expect(settings?.clientSecret).toBe(wrong)
    const failure = await logInAs("team", settings, dir).then(
      () => undefined,
      (e: Error) => e
    )
    expect(failure).toBeInstanceOf(Error)
    expect(failure!.message).not.toContain(wrong)
    expect(loginStatus(dir, gate.url).loggedIn).toBe(false)
  }, 90_000)

  it("a secret that cannot be read is named by where it should be, never by value", () => {
    const missing = () => oauthSettingsOf({ clientId: "c", clientSecretEnv: "NOT_SET_ANYWHERE" }, root, {})
    expect(missing).toThrow(ClientSecretError)
    expect(missing).toThrow("oauth.clientSecretEnv names NOT_SET_ANYWHERE, which is not set")
    expect(() => oauthSettingsOf({ clientSecretEnv: "X" }, root, { X: "s3cret" })).toThrow("give clientId too")
    expect(() => oauthSettingsOf({ clientId: "c", clientSecretEnv: "X", clientSecretFile: "f" }, root, {})).toThrow(
      "not both"
    )
    expect(() => oauthSettingsOf({ clientId: "c", clientSecretFile: "no/such/file" }, root)).toThrow(
      `oauth.clientSecretFile ${NodePath.join(root, "no/such/file")} cannot be read (ENOENT)`
    )
  })
})
