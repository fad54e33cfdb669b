/**
 * A real OAuth 2.1 authorization server for the tests: oidc-provider on 127.0.0.1, with
 * JWT access tokens bound to a resource (RFC 8707), opaque ones for resources the test names,
 * client credentials (to mint tokens), introspection, revocation, dynamic client registration, Client ID
 * Metadata Documents (fetched through the test's own function: nothing leaves the machine) and
 * its development login pages, which `logIn` fills in as a person would.
 */
import type { AddressInfo } from "node:net"
import { exportJWK, generateKeyPair, SignJWT } from "jose"
import Provider, { type ClientLike, type Configuration } from "oidc-provider"

export interface AuthorizationServer {
  readonly issuer: string
  readonly provider: Provider
  /** A token from the client-credentials grant, for `resource`, as `clientId`. */
  readonly mint: (resource: string, options?: { clientId?: string; scope?: string }) => Promise<string>
  /** A JWT signed with the server's own key, saying whatever the test wants (what a bug or a leak could produce). */
  readonly sign: (payload: Record<string, unknown>, typ: string) => Promise<string>
  readonly close: () => Promise<void>
}

export interface AuthorizationServerOptions {
  /** Resources whose access tokens are opaque (checked by introspection); others get JWTs. */
  readonly opaque?: ReadonlyArray<string>
  /** Answers the server's fetch of a Client ID Metadata Document (by URL); undefined: 404. */
  readonly clientMetadata?: (url: string) => unknown
  /** Access token lifetime in seconds (default 600); the `short` client's is always 1. */
  readonly accessTokenTtl?: number
  /** Clients registered by hand (a person's, with its secret), beside the test's own. */
  readonly clients?: ReadonlyArray<Record<string, unknown>>
}

export const RS_CLIENT = { clientId: "freecode-rs", clientSecret: "rs-secret-0123456789abcdef" }

/** A client registered by hand, with a secret, as a person registers one for a server: pass `handmadeClient` in `clients`. */
export const HANDMADE = { id: "handmade-client", secret: "handmade-secret-7f3a9c1e5b2d4680" }
export const handmadeClient: Record<string, unknown> = {
  client_id: HANDMADE.id,
  client_secret: HANDMADE.secret,
  grant_types: ["authorization_code", "refresh_token"],
  response_types: ["code"],
  application_type: "native",
  redirect_uris: ["http://127.0.0.1/callback"],
  token_endpoint_auth_method: "client_secret_basic"
}
export const SCOPE = "mcp:tools"

export const startAuthorizationServer = async (options: AuthorizationServerOptions = {}) => {
  const { privateKey } = await generateKeyPair("ES256", { extractable: true })
  const jwk = { ...(await exportJWK(privateKey)), alg: "ES256", use: "sig", kid: "test-key" }
  const opaque = new Set(options.opaque ?? [])
  const ttl = options.accessTokenTtl ?? 600
  let issuer = "http://127.0.0.1:0"
  const configuration: Configuration = {
    jwks: { keys: [jwk] },
    clientDefaults: { id_token_signed_response_alg: "ES256" },
    enabledJWA: { authorizationSigningAlgValues: ["ES256"], idTokenSigningAlgValues: ["ES256"] },
    clients: [
      { ...m2m(RS_CLIENT.clientId, RS_CLIENT.clientSecret) },
      { ...m2m("minter", "minter-secret-0123456789ab") },
      { ...m2m("short", "short-secret-0123456789abc") },
      ...(options.clients ?? [])
    ],
    scopes: ["openid", "offline_access", SCOPE, "mcp:admin"],
    features: {
      devInteractions: { enabled: true },
      clientCredentials: { enabled: true },
      introspection: { enabled: true },
      revocation: { enabled: true },
      registration: { enabled: true },
      clientIdMetadataDocument: {
        enabled: true,
        ack: "draft-02",
        allowFetch: async () => true
      },
      resourceIndicators: {
        enabled: true,
        defaultResource: async (_ctx: unknown, _client: unknown, oneOf?: string | Array<string>) =>
          Array.isArray(oneOf) ? oneOf[0] : oneOf,
        useGrantedResource: async () => true,
        getResourceServerInfo: async (_ctx: unknown, resource: string, client: ClientLike) => ({
          scope: `${SCOPE} mcp:admin`,
          audience: resource,
          accessTokenTTL: client.clientId === "short" ? 1 : ttl,
          ...(opaque.has(resource)
            ? { accessTokenFormat: "opaque" }
            : { accessTokenFormat: "jwt", jwt: { sign: { alg: "ES256" } } })
        })
      }
    },
    // Every code grant gets a refresh token (the client asks for offline use by asking for one).
    issueRefreshToken: async (_ctx: unknown, client: ClientLike) => client.grantTypeAllowed("refresh_token"),
    pkce: { required: () => true },
    fetch: async (url: URL | string) => {
      const document = options.clientMetadata?.(String(url))
      return document === undefined
        ? new Response("not found", { status: 404 })
        : new Response(JSON.stringify(document), { status: 200, headers: { "content-type": "application/json" } })
    }
  }
  // The issuer must be known before the port is; listen first, then build the provider on it.
  const { createServer } = await import("node:http")
  let handler: ((req: import("node:http").IncomingMessage, res: import("node:http").ServerResponse) => void) | undefined
  const http = createServer((req, res) => handler?.(req, res))
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", () => resolve()))
  issuer = `http://127.0.0.1:${(http.address() as AddressInfo).port}`
  const provider = new Provider(issuer, configuration)
  // oidc-provider refuses plain http for its cookies only behind a proxy; loopback is fine.
  handler = provider.callback()

  const mint = async (resource: string, o: { clientId?: string; scope?: string } = {}) => {
    const id = o.clientId ?? "minter"
    const secret = id === "short" ? "short-secret-0123456789abc" : "minter-secret-0123456789ab"
    const res = await fetch(`${issuer}/token`, {
      method: "POST",
      headers: {
        authorization: `Basic ${Buffer.from(`${id}:${secret}`).toString("base64")}`,
        "content-type": "application/x-www-form-urlencoded"
      },
      body: new URLSearchParams({ grant_type: "client_credentials", resource, scope: o.scope ?? SCOPE })
    })
    const body = (await res.json()) as { access_token?: string; error?: string; error_description?: string }
    if (body.access_token === undefined) throw new Error(`mint: ${body.error}: ${body.error_description}`)
    return body.access_token
  }

  const sign = (payload: Record<string, unknown>, typ: string) =>
    new SignJWT(payload).setProtectedHeader({ alg: "ES256", kid: "test-key", typ }).sign(privateKey)

  return {
    issuer,
    provider,
    mint,
    sign,
    close: () =>
      new Promise<void>((resolve) => {
        http.closeAllConnections()
        http.close(() => resolve())
      })
  } satisfies AuthorizationServer
}

const m2m = (clientId: string, clientSecret: string) => ({
  client_id: clientId,
  client_secret: clientSecret,
  grant_types: ["client_credentials"],
  response_types: [],
  redirect_uris: []
})

/**
 * Logs in as a person would in a browser at `authorizationUrl`: the development login form
 * (any name), then on to the redirect, whose URL (carrying the code) is returned unfollowed.
 */
export const logIn = async (authorizationUrl: string, login = "alice"): Promise<URL> => {
  const cookies = new Map<string, string>()
  const send = async (url: string, init: RequestInit = {}) => {
    const res = await fetch(url, {
      ...init,
      redirect: "manual",
      headers: {
        ...(init.headers as Record<string, string>),
        cookie: [...cookies].map(([k, v]) => `${k}=${v}`).join("; ")
      }
    })
    for (const line of res.headers.getSetCookie()) {
      const [pair] = line.split(";")
      const eq = pair!.indexOf("=")
      cookies.set(pair!.slice(0, eq), pair!.slice(eq + 1))
    }
    return res
  }
  let url = authorizationUrl
  for (let step = 0; step < 12; step++) {
    const res = await send(url)
    const location = res.headers.get("location")
    if (location !== null) {
      const next = new URL(location, url)
      if (!next.pathname.startsWith("/interaction") && !next.pathname.startsWith("/auth")) return next
      url = next.href
      continue
    }
    const page = await res.text()
    const action = page.match(/<form[^>]*action="([^"]+)"/)?.[1]
    if (action === undefined)
      throw new Error(`logIn: no form and no redirect at ${url} (${res.status}): ${page.slice(0, 300)}`)
    const fields = new URLSearchParams()
    for (const [tag] of page.matchAll(/<input[^>]*>/g)) {
      const name = tag.match(/name="([^"]+)"/)?.[1]
      if (name !== undefined) fields.set(name, tag.match(/value="([^"]*)"/)?.[1] ?? "")
    }
    if (fields.has("login")) fields.set("login", login)
    if (fields.has("password")) fields.set("password", "any")
    const posted = await send(new URL(action, url).href, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: fields
    })
    const after = posted.headers.get("location")
    if (after === null) throw new Error(`logIn: the form at ${url} did not redirect (${posted.status})`)
    const next = new URL(after, url)
    if (!next.pathname.startsWith("/interaction") && !next.pathname.startsWith("/auth")) return next
    url = next.href
  }
  throw new Error("logIn: too many steps")
}
