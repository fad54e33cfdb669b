/**
 * Connecting to one MCP server with the SDK 2.x client, in the era it speaks: a
 * `server/discover` probe first (2026-07-28: no handshake, no session, every request carries its
 * version and client info in `_meta`); a server that answers it as a 2025-era server would gets
 * the `initialize` handshake, as before. `protocol` in the server's config pins one era instead.
 *
 * Over stdio the probe is sent on the server's own pipe (the SDK's default spawns a second,
 * short-lived copy of the server for it, which doubles a slow server's start). Silence on a pipe
 * is how some 2025-era servers answer an unknown request, so a probe unanswered for half the
 * startup timeout is followed by `initialize` on the same pipe. Two ways that guess can be wrong
 * are mended by starting the server again: a server that exits on the probe (some 2025-era
 * servers do on any request before `initialize`) is greeted the 2025 way, and a 2026-only server
 * that was only slow to start, and so refuses the `initialize` that followed, the 2026 way.
 */
import * as NodePath from "node:path"
import type { Client, Transport } from "@modelcontextprotocol/client"
import { Effect } from "effect"
import { lazyImport } from "../load/lazy.ts"
import { backgroundProvider, type RunAuth, type StoredOAuthProvider } from "./auth/client-provider.ts"
import { oauthSettingsOf } from "./auth/client-secret.ts"
import type { LoginRoute } from "./call-login.ts"
import { expandEnv, isStdio, type McpServerConfig } from "./config.ts"
import { watchedFetch } from "./http-watch.ts"
import { CLIENT_CAPABILITIES } from "./questions.ts"

type ClientModule = typeof import("@modelcontextprotocol/client")
type StdioModule = typeof import("@modelcontextprotocol/client/stdio")

export interface McpSdk {
  readonly Client: ClientModule["Client"]
  readonly SdkError: ClientModule["SdkError"]
  readonly SdkErrorCode: ClientModule["SdkErrorCode"]
  readonly getDefaultEnvironment: StdioModule["getDefaultEnvironment"]
  /** The stdio transport, probing in place. */
  readonly InPlaceStdio: StdioModule["StdioClientTransport"]
  readonly StreamableHTTPClientTransport: ClientModule["StreamableHTTPClientTransport"]
  /** The SDK's OAuth flow: refreshes a saved login's tokens before they end. */
  readonly auth: ClientModule["auth"]
  readonly extractWWWAuthenticateParams: ClientModule["extractWWWAuthenticateParams"]
}

/**
 * The SDK's client side (and zod under it): imported on the first connection, so a process with
 * no MCP server configured never loads it.
 */
const loadSdk = lazyImport(async (): Promise<McpSdk> => {
  const [client, stdio] = await Promise.all([
    import("@modelcontextprotocol/client"),
    import("@modelcontextprotocol/client/stdio")
  ])
  // A subclass probes in place (the SDK only spawns a sibling for its own class).
  class InPlaceStdio extends stdio.StdioClientTransport {}
  return {
    Client: client.Client,
    SdkError: client.SdkError,
    SdkErrorCode: client.SdkErrorCode,
    getDefaultEnvironment: stdio.getDefaultEnvironment,
    InPlaceStdio,
    StreamableHTTPClientTransport: client.StreamableHTTPClientTransport,
    auth: client.auth,
    extractWWWAuthenticateParams: client.extractWWWAuthenticateParams
  }
})

/** The SDK's client side, loaded once per process. */
export const mcpSdk: Effect.Effect<McpSdk> = Effect.promise(loadSdk)

export const CLIENT_INFO = { name: "freecode-tools", version: "0.1.0" }

/** The newest revision this client speaks. */
export const MODERN_REVISION = "2026-07-28"

/** One stdio message may be at most this long (as one our own server accepts). */
export const MAX_STDIO_MESSAGE_BYTES = 10 * 1024 * 1024

export type Era = "2026-07-28" | "2025-11-25"

export interface TransportHooks {
  /** The server's stderr, as it comes (stdio). */
  readonly stderr: (chunk: string) => void
  /** An HTTP server stopped answering mid-call (http-watch.ts). */
  readonly dead: (reason: string) => void
}

/** Where a saved OAuth login of an HTTP server is kept (mcp-auth): the state folder, the server's name. */
export interface SavedLogin {
  readonly stateDir: string
  readonly name: string
}

/**
 * Where an HTTP server's saved OAuth login (mcp-auth) is, when its connection uses one: a state
 * folder, and no Authorization header of the config's own.
 */
export const loginRouteOf = (
  config: McpServerConfig,
  root: string,
  login: SavedLogin | undefined,
  env: Readonly<Record<string, string | undefined>> = process.env
): LoginRoute | undefined => {
  if (isStdio(config) || login === undefined) return undefined
  if (Object.keys(config.headers ?? {}).some((k) => k.toLowerCase() === "authorization")) return undefined
  return {
    stateDir: login.stateDir,
    serverUrl: expandEnv(config.url, env),
    name: login.name,
    settings: () => oauthSettingsOf(config.oauth, root, env)
  }
}

/** A fresh transport for one connection attempt. */
export const makeTransport = (
  sdk: McpSdk,
  config: McpServerConfig,
  root: string,
  hooks: TransportHooks,
  login?: SavedLogin
): Transport => {
  const env = process.env
  if (isStdio(config)) {
    const transport = new sdk.InPlaceStdio({
      command: expandEnv(config.command, env),
      args: (config.args ?? []).map((a) => expandEnv(a, env)),
      // The SDK passes on only HOME, PATH, USER and a few more; a server's own variables must be named.
      env: {
        ...sdk.getDefaultEnvironment(),
        ...Object.fromEntries(Object.entries(config.env ?? {}).map(([k, v]) => [k, expandEnv(v, env)]))
      },
      cwd: NodePath.resolve(root, expandEnv(config.cwd ?? ".", env)),
      stderr: "pipe",
      maxBufferSize: MAX_STDIO_MESSAGE_BYTES
    })
    transport.stderr?.on("data", (chunk: Buffer) => hooks.stderr(chunk.toString()))
    return transport
  }
  const url = expandEnv(config.url, env)
  const headers = Object.fromEntries(Object.entries(config.headers ?? {}).map(([k, v]) => [k, expandEnv(v, env)]))
  const route = loginRouteOf(config, root, login)
  const provider =
    route === undefined
      ? undefined
      : backgroundProvider(route.stateDir, url, route.name, route.settings(), {
          auth: sdk.auth as RunAuth,
          fetch: watchedFetch(hooks.dead)
        })
  const fetch = provider === undefined ? watchedFetch(hooks.dead) : challengeWatch(sdk, url, provider, hooks.dead)
  return new sdk.StreamableHTTPClientTransport(new URL(url), {
    fetch,
    requestInit: { headers },
    ...(provider === undefined ? {} : { authProvider: provider })
  })
}

/**
 * The transport's fetch, telling the login provider when the server refuses a request — any
 * request, a call as much as the first one — with what its WWW-Authenticate header asks for: the
 * SDK runs its OAuth flow then, and what the provider says to the person names that scope.
 */
const challengeWatch = (
  sdk: McpSdk,
  url: string,
  provider: StoredOAuthProvider,
  dead: TransportHooks["dead"]
): typeof fetch => {
  const inner = watchedFetch(dead)
  const endpoint = new URL(url)
  return async (input, init) => {
    const res = await inner(input, init)
    if (res.status !== 401 && res.status !== 403) return res
    const target = new URL(input instanceof Request ? input.url : String(input))
    if (target.origin !== endpoint.origin || target.pathname !== endpoint.pathname) return res
    const { scope, resourceMetadataUrl, error } = sdk.extractWWWAuthenticateParams(res)
    provider.challenged({
      status: res.status,
      ...(scope === undefined ? {} : { scope }),
      ...(resourceMetadataUrl === undefined ? {} : { resourceMetadataUrl: resourceMetadataUrl.href }),
      ...(error === undefined ? {} : { error })
    })
    return res
  }
}

/** The negotiation the config asks for: both eras by default. */
const negotiation = (config: McpServerConfig, probeMs: number) => {
  if (config.protocol === "2026-07-28") return { mode: { pin: MODERN_REVISION } }
  if (config.protocol === "2025-11-25") return { mode: "legacy" as const }
  return { mode: "auto" as const, probe: { timeoutMs: probeMs } }
}

export interface Connected {
  readonly client: Client
  readonly era: Era
}

export interface ConnectOptions {
  readonly config: McpServerConfig
  readonly root: string
  readonly hooks: TransportHooks
  /** The whole connection's budget; the probe gets part of it. */
  readonly timeoutMs: number
  /** Set up a client before it connects (handlers that must see the first messages). */
  readonly prepare: (client: Client) => void
  /** Where the server's saved OAuth login is, when there is a state folder. */
  readonly login?: SavedLogin
  /**
   * The caller gave up (its startup timeout, its scope closed): the attempt under way is closed
   * (its server process ended) and no other is started, so no server outlives the caller.
   */
  readonly signal?: AbortSignal
}

/**
 * Connects in the era the server speaks. Rejects with the SDK's error when the server cannot be
 * reached; the caller bounds the whole by its startup timeout.
 */
export const connectClient = async (sdk: McpSdk, options: ConnectOptions): Promise<Connected> => {
  const { config, root, hooks } = options
  // A 2025-era server that never answers unknown requests costs this much before the handshake;
  // a loaded machine can take seconds to start a server, which must not be taken for silence.
  const probeMs = Math.max(1000, Math.floor(options.timeoutMs / 2))
  const { signal } = options
  const attempt = async (era?: Era): Promise<Connected> => {
    signal?.throwIfAborted()
    const client = new sdk.Client(CLIENT_INFO, {
      capabilities: CLIENT_CAPABILITIES,
      // A 2026 server's questions are answered by the call that got them (call.ts), in its own
      // context: the SDK answering them by itself could not tell whose person to ask.
      inputRequired: { autoFulfill: false },
      versionNegotiation:
        era === undefined
          ? negotiation(config, probeMs)
          : era === "2025-11-25"
            ? { mode: "legacy" }
            : { mode: { pin: MODERN_REVISION } },
      listMaxPages: 100
    })
    options.prepare(client)
    const transport = makeTransport(sdk, config, root, hooks, options.login)
    const abandon = () => void client.close().catch(() => undefined)
    signal?.addEventListener("abort", abandon, { once: true })
    try {
      await client.connect(transport, { timeout: options.timeoutMs })
      // Connected just as the caller gave up: nobody will close this one but us.
      signal?.throwIfAborted()
    } catch (e) {
      await client.close().catch(() => undefined)
      throw e
    } finally {
      signal?.removeEventListener("abort", abandon)
    }
    // The revision a server speaks is a date: 2026-07-28 and later are the stateless era.
    const version = client.getNegotiatedProtocolVersion() ?? ""
    return { client, era: version >= MODERN_REVISION ? "2026-07-28" : "2025-11-25" }
  }
  try {
    return await attempt()
  } catch (e) {
    // Only a stdio server's guessed era is tried again: over HTTP, and for any other failure,
    // the error is the answer.
    if (!isStdio(config) || config.protocol !== undefined) throw e
    const message = e instanceof Error ? e.message : String(e)
    const closed =
      (e instanceof sdk.SdkError && e.code === sdk.SdkErrorCode.ConnectionClosed) ||
      /connection closed during the server\/discover probe/i.test(message)
    if (closed) return await attempt("2025-11-25")
    if (/unsupported protocol version/i.test(message)) return await attempt("2026-07-28")
    throw e
  }
}
