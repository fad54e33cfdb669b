/**
 * Logging in to a remote MCP server, and out: `freecode-tools mcp-auth`. The server is asked
 * once without a token; its 401 says where its protected resource metadata is (and which scope
 * it wants). A one-shot listener on 127.0.0.1 takes the person's return from the authorization
 * server; the SDK's `auth()` does discovery, registration (a Client ID Metadata Document where
 * the server takes one), PKCE and the code exchange — after checking that the return names the
 * authorization server it was sent to (RFC 9207 `iss`: a mix-up attack returns another's code);
 * the tokens land in the state folder.
 * Tokens are never printed: status says only whether there are any and when they end.
 */
import { randomBytes } from "node:crypto"
import * as NodeHttp from "node:http"
import type { AddressInfo } from "node:net"
import {
  auth,
  discoverOAuthProtectedResourceMetadata,
  extractWWWAuthenticateParams,
  selectClientAuthMethod
} from "@modelcontextprotocol/client"
import { type OAuthClientSettings, StoredOAuthProvider } from "./client-provider.ts"
import { scopeUnion } from "./login-needed.ts"
import { readLogin, updateLogin, writeLogin } from "./token-store.ts"

export interface LoginOptions {
  readonly stateDir: string
  readonly serverUrl: string
  /** How the server is named to the person (its config name, or its URL). */
  readonly name: string
  readonly settings?: OAuthClientSettings
  /** Told the URL to send the person to. */
  readonly open: (url: URL) => void
  /** How long to wait for the person to come back (default 5 minutes). */
  readonly timeoutMs?: number
}

export type LoginResult =
  | { readonly kind: "logged-in"; readonly scope?: string; readonly expiresAt?: number }
  /** The server answered without asking for a token: nothing to log in to. */
  | { readonly kind: "open"; readonly status: number }

const INITIALIZE = JSON.stringify({
  jsonrpc: "2.0",
  id: 0,
  method: "initialize",
  params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "freecode-tools", version: "0.1.0" } }
})

/** Whether the server publishes protected resource metadata (RFC 9728): it takes OAuth logins. */
const publishesMetadata = async (serverUrl: string, resourceMetadataUrl: string | undefined) => {
  try {
    await discoverOAuthProtectedResourceMetadata(
      serverUrl,
      resourceMetadataUrl === undefined ? {} : { resourceMetadataUrl }
    )
    return true
  } catch {
    return false
  }
}

/** What the server says to a request without a token. */
const probe = async (serverUrl: string) => {
  const res = await fetch(serverUrl, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
    body: INITIALIZE,
    signal: AbortSignal.timeout(30_000)
  })
  await res.body?.cancel()
  return { status: res.status, ...extractWWWAuthenticateParams(res) }
}

const page = (title: string, text: string) =>
  `<!doctype html><meta charset="utf-8"><title>${title}</title><p>${text.replace(/[<>&]/g, "")}</p>`

/** What the authorization server sent the person back with: the code, and who it says it is. */
interface Returned {
  readonly code: string
  readonly iss?: string
}

/** A listener on 127.0.0.1 for one return to /callback carrying `state`; on `port` when free, else any. */
const callbackListener = async (port: number | undefined, state: string) => {
  let settle: { resolve: (got: Returned) => void; reject: (e: Error) => void } | undefined
  const code = new Promise<Returned>((resolve, reject) => {
    settle = { resolve, reject }
  })
  // A refusal that comes when nobody waits any more (the wait timed out) is not a crash.
  code.catch(() => undefined)
  const server = NodeHttp.createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://127.0.0.1")
    if (url.pathname !== "/callback") return void res.writeHead(404).end()
    const given = url.searchParams
    // A return without our state is not this login's (another page, another tab): refused, and waited on.
    if (given.get("state") !== state) {
      res.writeHead(400, { "content-type": "text/html" }).end(page("Refused", "This is not the login under way."))
      return
    }
    const error = given.get("error")
    const value = given.get("code")
    if (error !== null || value === null) {
      res.writeHead(400, { "content-type": "text/html" }).end(page("Not logged in", "The login did not succeed."))
      settle?.reject(
        new Error(
          `the authorization server refused: ${error ?? "no code"}${given.has("error_description") ? ` (${given.get("error_description")})` : ""}`
        )
      )
      return
    }
    res.writeHead(200, { "content-type": "text/html" }).end(page("Logged in", "Logged in. You can close this tab."))
    const iss = given.get("iss")
    settle?.resolve({ code: value, ...(iss === null ? {} : { iss }) })
  })
  const listen = (p: number) =>
    new Promise<void>((resolve, reject) => {
      server.once("error", reject)
      server.listen(p, "127.0.0.1", () => {
        server.off("error", reject)
        resolve()
      })
    })
  try {
    await listen(port ?? 0)
  } catch {
    await listen(0)
  }
  return {
    redirectUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/callback`,
    code,
    // Answers under way are finished (the person's "not logged in" page), idle connections cut.
    close: () => {
      server.close()
      server.closeIdleConnections()
    }
  }
}

const portOf = (url: string | undefined) => {
  if (url === undefined) return undefined
  const port = Number(new URL(url).port)
  return Number.isInteger(port) && port > 0 ? port : undefined
}

/** A login waiting for the person: the authorization URL to send them to, and the rest of it. */
export interface LoginUnderway {
  readonly kind: "underway"
  /** Where to send the person; undefined when the authorization server needed no visit. */
  readonly url: URL | undefined
  /** Waits for the person's return (`timeoutMs`, default 5 minutes), redeems the code, saves the tokens. */
  readonly finish: (timeoutMs?: number) => Promise<LoginResult>
  /** Stops the loopback listener (after `finish`, or instead of it when the person will not come). */
  readonly close: () => void
}

/**
 * Starts a fresh login to `serverUrl`: the loopback listener is up and the authorization URL made
 * (discovery, registration, PKCE). Saved tokens stay until the new ones arrive, so a login the
 * person never finishes leaves the last one working (a 403 for a wider scope still lets the
 * narrower calls through).
 */
export const beginLogin = async (
  options: Omit<LoginOptions, "open" | "timeoutMs">
): Promise<LoginUnderway | Extract<LoginResult, { kind: "open" }>> => {
  const first = await probe(options.serverUrl)
  const saved = readLogin(options.stateDir, options.serverUrl)
  // A server may open its first request to all and ask for a login only on a call (or a wider
  // scope on one): the session saved what it asked for then. Its metadata says it takes logins.
  // (A 2026-era server may refuse the probe's `initialize` outright: its metadata decides there too.)
  if (first.status !== 401 && first.status !== 403) {
    if (!(await publishesMetadata(options.serverUrl, saved?.wanted?.resourceMetadataUrl))) {
      if (first.status >= 200 && first.status < 300) return { kind: "open", status: first.status }
      throw new Error(`${options.serverUrl} answered ${first.status} without a token; it is not asking for a login`)
    }
  }
  const state = randomBytes(24).toString("base64url")
  const listener = await callbackListener(portOf(saved?.redirectUrl), state)
  try {
    let sent: URL | undefined
    const provider = new StoredOAuthProvider({
      stateDir: options.stateDir,
      serverUrl: options.serverUrl,
      name: options.name,
      ...(options.settings === undefined ? {} : { settings: options.settings }),
      login: {
        redirectUrl: listener.redirectUrl,
        state,
        open: (url) => {
          sent = url
        }
      }
    })
    // Registered with another port: an authorization server that holds to the exact redirect would refuse it.
    if (
      saved?.redirectUrl !== undefined &&
      saved.redirectUrl !== listener.redirectUrl &&
      options.settings?.clientId === undefined
    ) {
      provider.invalidateCredentials("client")
    }
    // What the last login asked for, and what the server has asked for since (SEP-2350: the union,
    // so a step-up does not lose what was granted before). Nothing named: the server's metadata decides.
    const scope = scopeUnion(saved?.asked, saved?.wanted?.scope, first.scope)
    // A client we registered for fewer scopes may be held to them by its authorization server
    // (invalid_scope): a step-up registers again. A client id given by hand or a metadata document is kept.
    const registered = saved?.clientInformation as { scope?: string; client_id?: string } | undefined
    if (
      registered?.scope !== undefined &&
      options.settings?.clientId === undefined &&
      registered.client_id !== options.settings?.clientMetadataUrl &&
      scopeUnion(registered.scope, scope) !== scopeUnion(registered.scope)
    ) {
      provider.invalidateCredentials("client")
    }
    const resourceMetadataUrl = first.resourceMetadataUrl ?? saved?.wanted?.resourceMetadataUrl
    const discovered = {
      serverUrl: options.serverUrl,
      ...(resourceMetadataUrl === undefined ? {} : { resourceMetadataUrl: new URL(resourceMetadataUrl) }),
      ...(scope === undefined ? {} : { scope })
    }
    const started = await auth(provider, discovered)
    const finish = async (timeoutMs = 5 * 60_000): Promise<LoginResult> => {
      if (started === "REDIRECT") {
        let timer: NodeJS.Timeout | undefined
        const returned = await Promise.race([
          listener.code,
          new Promise<never>((_, reject) => {
            timer = setTimeout(
              () => reject(new Error(`nobody came back from the login page within ${Math.round(timeoutMs / 1000)} s`)),
              timeoutMs
            )
          })
        ]).finally(() => clearTimeout(timer))
        // The SDK checks `iss` against the issuer it discovered before redeeming the code: present
        // and equal where the server advertises it, equal where it is given at all.
        await auth(provider, {
          ...discovered,
          authorizationCode: returned.code,
          ...(returned.iss === undefined ? {} : { iss: returned.iss })
        })
      }
      // What the server asked for is now asked for: a later refusal starts its own list.
      updateLogin(options.stateDir, options.serverUrl, ({ wanted: _asked, ...rest }) => rest)
      return statusOf(readLogin(options.stateDir, options.serverUrl))
    }
    return { kind: "underway", url: started === "REDIRECT" ? sent : undefined, finish, close: listener.close }
  } catch (e) {
    listener.close()
    throw e
  }
}

/** Logs the person in to `serverUrl`: the URL goes to `open`, and the login waits for their return. */
export const login = async (options: LoginOptions): Promise<LoginResult> => {
  const begun = await beginLogin(options)
  if (begun.kind === "open") return begun
  try {
    if (begun.url !== undefined) options.open(begun.url)
    return await begun.finish(options.timeoutMs)
  } finally {
    begun.close()
  }
}

const statusOf = (entry: ReturnType<typeof readLogin>): LoginResult => {
  const tokens = entry?.tokens
  if (tokens === undefined) throw new Error("the login ended without tokens")
  return {
    kind: "logged-in",
    ...(tokens.scope === undefined ? {} : { scope: tokens.scope }),
    ...(tokens.expires_in === undefined || entry?.savedAt === undefined
      ? {}
      : { expiresAt: entry.savedAt + tokens.expires_in * 1000 })
  }
}

export interface LoginStatus {
  readonly loggedIn: boolean
  readonly issuer?: string
  readonly clientId?: string
  readonly scope?: string
  /** When the access token ends (ms since the epoch); a refresh token renews it. */
  readonly expiresAt?: number
  readonly refreshable: boolean
}

/** What is saved for `serverUrl`, without a token in it. */
export const loginStatus = (stateDir: string, serverUrl: string): LoginStatus => {
  const entry = readLogin(stateDir, serverUrl)
  const tokens = entry?.tokens
  const issuer = entry?.discovery?.authorizationServerUrl
  return {
    loggedIn: tokens !== undefined,
    ...(issuer === undefined ? {} : { issuer }),
    ...(entry?.clientInformation === undefined ? {} : { clientId: entry.clientInformation.client_id }),
    ...(tokens?.scope === undefined ? {} : { scope: tokens.scope }),
    ...(tokens?.expires_in === undefined || entry?.savedAt === undefined
      ? {}
      : { expiresAt: entry.savedAt + tokens.expires_in * 1000 }),
    refreshable: tokens?.refresh_token !== undefined
  }
}

/** RFC 6749 §2.3.1: the id and secret are form-encoded before they are joined for Basic. */
const basic = (id: string, secret: string) =>
  `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString("base64")}`

/**
 * Forgets the login to `serverUrl`: the refresh token is revoked at the authorization server
 * when it offers revocation (RFC 7009; a failure there is reported, the local copy goes anyway).
 * A client registered by hand authenticates as it did at login: `settings` gives its secret
 * (read when needed; a secret that cannot be read is named in `why`, never its value).
 */
export const logout = async (
  stateDir: string,
  serverUrl: string,
  settings?: () => OAuthClientSettings | undefined
): Promise<{ readonly had: boolean; readonly revoked: boolean | "unsupported"; readonly why?: string }> => {
  const entry = readLogin(stateDir, serverUrl)
  writeLogin(stateDir, serverUrl, undefined)
  const token = entry?.tokens?.refresh_token ?? entry?.tokens?.access_token
  const metadata = entry?.discovery?.authorizationServerMetadata as
    | {
        revocation_endpoint?: string
        revocation_endpoint_auth_methods_supported?: Array<string>
        token_endpoint_auth_methods_supported?: Array<string>
      }
    | undefined
  const endpoint = metadata?.revocation_endpoint
  if (entry === undefined || token === undefined) return { had: entry !== undefined, revoked: false }
  if (endpoint === undefined) return { had: true, revoked: "unsupported" }
  try {
    const given = settings?.()
    const stored = entry.clientInformation
    // A hand-given id is the one the login used (it is not always saved: nothing was registered).
    const client =
      given?.clientId === undefined
        ? stored
        : {
            ...(stored?.client_id === given.clientId ? stored : { client_id: given.clientId }),
            ...(given.clientSecret === undefined ? {} : { client_secret: given.clientSecret })
          }
    const body = new URLSearchParams({
      token,
      token_type_hint: entry.tokens?.refresh_token === undefined ? "access_token" : "refresh_token"
    })
    const headers: Record<string, string> = { "content-type": "application/x-www-form-urlencoded" }
    if (client !== undefined) {
      // RFC 8414: the revocation endpoint's own methods, else the token endpoint's, as the login chose.
      const methods =
        metadata?.revocation_endpoint_auth_methods_supported ?? metadata?.token_endpoint_auth_methods_supported ?? []
      const method = selectClientAuthMethod(client, methods)
      if (method === "client_secret_basic" && client.client_secret !== undefined) {
        headers.authorization = basic(client.client_id, client.client_secret)
      } else {
        body.set("client_id", client.client_id)
        if (method === "client_secret_post" && client.client_secret !== undefined) {
          body.set("client_secret", client.client_secret)
        }
      }
    }
    const res = await fetch(endpoint, { method: "POST", headers, body, signal: AbortSignal.timeout(30_000) })
    if (res.ok) {
      await res.body?.cancel()
      return { had: true, revoked: true }
    }
    return { had: true, revoked: false, why: `it answered ${res.status}: ${(await res.text()).slice(0, 300)}` }
  } catch (e) {
    return { had: true, revoked: false, why: e instanceof Error ? e.message : String(e) }
  }
}
