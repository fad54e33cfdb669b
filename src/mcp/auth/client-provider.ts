/**
 * The MCP SDK's OAuth client (`auth()` in @modelcontextprotocol/client, SDK 2.x) does the
 * protocol: discovery from the 401 (protected resource metadata, then the authorization
 * server's), a Client ID Metadata Document when the server takes one, else dynamic
 * registration, authorization code with PKCE, refresh. This is what it asks of its user: where
 * things are kept (token-store.ts), where the person is sent, and who we are.
 *
 * Two uses. At `mcp-auth login` the person is sent to the authorization URL. While connecting
 * in the background nobody can be sent anywhere: a server that needs a login fails with
 * LoginNeeded (login-needed.ts), which names the command to run; a stored refresh token is still used. That holds
 * for any request, not only the first: the transport's fetch tells the provider what a refusal
 * (a call's 401, a 403 for a wider scope) asked for (`challenged`), the LoginNeeded names that
 * scope and it is saved (`wanted`) for the next login to ask for; a 403 for no more than the last
 * login asked for is `scope-refused`, since another login would only loop.
 *
 * Refreshing. The SDK refreshes when the server answers 401 (and retries that request once).
 * Before that, an access token about to end is refreshed before it is sent (`tokens()` as the
 * transport reads it, per request): a request is not spent on a token known to be dead, and a
 * server that would take a dead token's 401 badly (a stream cut mid-call) never sees one.
 */
import type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthClientProvider,
  OAuthDiscoveryState,
  OAuthTokens
} from "@modelcontextprotocol/client"
import { type Challenge, LoginNeeded, scopesOf, scopeUnion } from "./login-needed.ts"
import { readLogin, type StoredLogin, updateLogin } from "./token-store.ts"

/** Per-server OAuth settings (`oauth` in an HTTP server's config). */
export interface OAuthClientSettings {
  /** A client id registered by hand with the authorization server (no registration, no metadata document). */
  readonly clientId?: string
  /** Its secret, when it was given one (read from an env var or a file: client-secret.ts); never saved nor shown. */
  readonly clientSecret?: string
  /** The https URL of this client's Client ID Metadata Document, used as its client id where the server supports it. */
  readonly clientMetadataUrl?: string
  /** The scopes to ask for when neither the server's 401 nor its metadata names them. */
  readonly scope?: string
}

export interface LoginHooks {
  /** The loopback URL the authorization server sends the person back to. */
  readonly redirectUrl: string
  /** The `state` the callback must carry back. */
  readonly state: string
  /** Sends the person to the authorization URL (the CLI prints it). */
  readonly open: (url: URL) => void
}

/** The SDK's `auth()`: given one, with a refresh token saved, it refreshes and saves the result. */
export type RunAuth = (
  provider: OAuthClientProvider,
  options: { serverUrl: string | URL; fetchFn?: typeof fetch }
) => Promise<"AUTHORIZED" | "REDIRECT">

/**
 * How long before its end an access token is refreshed: a minute, or half its life when that
 * is shorter (a 30-second token is not refreshed on every request).
 */
export const refreshMargin = (lifetimeMs: number): number => Math.min(60_000, lifetimeMs / 2)

/** Whether saved tokens should be refreshed before they are used at `now`. */
export const endsSoon = (entry: StoredLogin | undefined, now: number): boolean => {
  const tokens = entry?.tokens
  if (tokens?.refresh_token === undefined || tokens.expires_in === undefined || entry?.savedAt === undefined) {
    return false
  }
  const lifetime = tokens.expires_in * 1000
  return now >= entry.savedAt + lifetime - refreshMargin(lifetime)
}

export interface ProviderOptions {
  readonly stateDir: string
  readonly serverUrl: string
  /** How the server is named to the person: its config name, or its URL. */
  readonly name: string
  readonly settings?: OAuthClientSettings
  /** Present at login only. */
  readonly login?: LoginHooks
  /** The SDK's `auth()` and the fetch it uses: with them, tokens about to end are refreshed before use. */
  readonly refresh?: { readonly auth: RunAuth; readonly fetch?: typeof fetch }
}

/** Where a background client says it would be sent back (a login replaces it with its own port). */
const DEFAULT_REDIRECT = "http://127.0.0.1/callback"

export const clientMetadataFor = (redirectUrl: string, scope?: string): OAuthClientMetadata =>
  ({
    client_name: "freecode-tools",
    redirect_uris: [redirectUrl],
    grant_types: ["authorization_code", "refresh_token"],
    response_types: ["code"],
    // A command-line program keeps no secret: a public client, held to PKCE.
    token_endpoint_auth_method: "none",
    // RFC 8252: a native app on a loopback redirect, whose port may change between logins.
    application_type: "native",
    software_id: "freecode-tools",
    ...(scope === undefined ? {} : { scope })
  }) as OAuthClientMetadata

export class StoredOAuthProvider implements OAuthClientProvider {
  private verifier: string | undefined
  /** The refresh token this provider last handed out: only that one is dropped when refused. */
  private used: string | undefined
  /** What discovery found, when it is not saved (a background connection without a login). */
  private discovered: OAuthDiscoveryState | undefined
  /** The refresh under way: requests that find the token ending wait for this one, never start a second. */
  private refreshing: Promise<void> | undefined
  /** The authorization server refused the refresh token (the login has ended there). */
  private refused = false
  /** The scope this login sent the person to ask for. */
  private asking: string | undefined
  /** The server's last refusal of a request, as its WWW-Authenticate header put it. */
  private challenge: Challenge | undefined
  /** A login has saved its tokens (until then it hands out none: the saved ones stay for others). */
  private savedHere = false
  readonly clientMetadataUrl?: string
  private readonly options: ProviderOptions

  constructor(options: ProviderOptions) {
    this.options = options
    const url = options.settings?.clientMetadataUrl
    if (url !== undefined) this.clientMetadataUrl = url
  }

  private get entry(): StoredLogin | undefined {
    return readLogin(this.options.stateDir, this.options.serverUrl)
  }

  private update(change: (entry: StoredLogin) => StoredLogin | undefined): void {
    updateLogin(this.options.stateDir, this.options.serverUrl, change)
  }

  get redirectUrl(): string {
    return this.options.login?.redirectUrl ?? this.entry?.redirectUrl ?? DEFAULT_REDIRECT
  }

  get clientMetadata(): OAuthClientMetadata {
    return clientMetadataFor(this.redirectUrl, this.options.settings?.scope)
  }

  state(): string {
    return this.options.login?.state ?? ""
  }

  clientInformation(context?: { readonly issuer?: string }): OAuthClientInformationMixed | undefined {
    const { clientId, clientSecret } = this.options.settings ?? {}
    const stored = this.entry?.clientInformation
    // Registered with another authorization server than the one the server names now: a login
    // registers again there (the SDK drops the old registration); the background cannot.
    const registeredAt = (stored as { issuer?: string } | undefined)?.issuer
    if (
      this.options.login === undefined &&
      clientId === undefined &&
      registeredAt !== undefined &&
      context?.issuer !== undefined &&
      registeredAt.replace(/\/$/, "") !== context.issuer.replace(/\/$/, "")
    ) {
      throw this.loginNeeded(`its authorization server is now ${context.issuer}, not ${registeredAt}`)
    }
    if (clientId !== undefined) {
      // A hand-given id belongs to the authorization server it was given for: stamped with the one asking.
      const known =
        stored?.client_id === clientId
          ? stored
          : { client_id: clientId, ...(context?.issuer === undefined ? {} : { issuer: context.issuer }) }
      // The SDK picks client_secret_basic or _post from what the authorization server's metadata offers.
      return clientSecret === undefined ? known : { ...known, client_secret: clientSecret }
    }
    // In the background nobody may register a client: that is a login's business.
    if (stored === undefined && this.options.login === undefined) throw this.loginNeeded("no login saved")
    return stored
  }

  saveClientInformation(clientInformation: OAuthClientInformationMixed): void {
    // A registration made in the background would be with an authorization server the person never chose.
    // (The SDK stamping the issuer on a registration saved before it did so is not a new registration.)
    if (
      this.options.login === undefined &&
      this.options.settings?.clientId === undefined &&
      clientInformation.client_id !== this.entry?.clientInformation?.client_id
    ) {
      throw this.loginNeeded("its authorization server has changed since the last login")
    }
    // A hand-given secret stays where it was given (env var, file); the SDK hands it back with the id.
    const { client_secret, ...rest } = clientInformation as OAuthClientInformationMixed & { client_secret?: string }
    const kept =
      client_secret !== undefined && client_secret === this.options.settings?.clientSecret ? rest : clientInformation
    this.update((e) => ({ ...e, clientInformation: kept, redirectUrl: this.redirectUrl }))
  }

  /**
   * The SDK reads tokens in two places: the transport, per request, with no argument; and its own
   * `auth()`, with the issuer. Only the first refreshes ahead of time (the second is the refresh).
   */
  tokens(context?: unknown): OAuthTokens | undefined | Promise<OAuthTokens | undefined> {
    // A login asks afresh: the saved tokens, kept until new ones come, are not refreshed instead.
    if (this.options.login !== undefined && !this.savedHere) return undefined
    if (context === undefined && this.options.refresh !== undefined && endsSoon(this.entry, Date.now())) {
      return this.refreshAhead(this.options.refresh)
    }
    const tokens = this.entry?.tokens
    this.used = tokens?.refresh_token
    return tokens
  }

  private async refreshAhead(refresh: NonNullable<ProviderOptions["refresh"]>): Promise<OAuthTokens | undefined> {
    this.refreshing ??= refresh
      .auth(this, {
        serverUrl: this.options.serverUrl,
        ...(refresh.fetch === undefined ? {} : { fetchFn: refresh.fetch })
      })
      .then(() => undefined)
      .finally(() => {
        this.refreshing = undefined
      })
    await this.refreshing
    const tokens = this.entry?.tokens
    this.used = tokens?.refresh_token
    return tokens
  }

  saveTokens(tokens: OAuthTokens): void {
    // A login's tokens come with the scope it asked for; a refresh keeps the one saved.
    const asked = this.options.login === undefined ? undefined : this.asking
    this.savedHere = true
    this.update(({ asked: before, ...e }) => {
      const kept = this.options.login === undefined ? before : asked
      return { ...e, tokens, savedAt: Date.now(), ...(kept === undefined ? {} : { asked: kept }) }
    })
  }

  redirectToAuthorization(authorizationUrl: URL): void {
    if (this.options.login === undefined) {
      throw this.loginNeeded(
        this.refused
          ? "its authorization server refused to refresh the saved login"
          : this.entry?.tokens === undefined
            ? "no login saved"
            : this.challenge?.status === 403
              ? "it asks for more than the saved login grants"
              : "the login expired"
      )
    }
    // Saved with the tokens (a login nobody finished asked for nothing): a later 403 for no more
    // than this is then known not to be mended by another login.
    this.asking = authorizationUrl.searchParams.get("scope") ?? undefined
    this.options.login.open(authorizationUrl)
  }

  /** The transport saw the server refuse a request (401, or 403 with a scope): said in the next LoginNeeded. */
  challenged(challenge: Challenge): void {
    this.challenge = challenge
    // A token refused outright may be the old authorization server's: the next flow finds out afresh.
    if (challenge.status === 401) this.discovered = undefined
  }

  saveCodeVerifier(codeVerifier: string): void {
    // Kept in memory only: it lives for one login, in this process.
    this.verifier = codeVerifier
  }

  codeVerifier(): string {
    if (this.verifier === undefined) throw new Error("no login is under way in this process")
    return this.verifier
  }

  invalidateCredentials(scope: "all" | "client" | "tokens" | "verifier" | "discovery"): void {
    if (scope === "verifier") {
      this.verifier = undefined
      return
    }
    // The SDK drops the tokens when the authorization server refuses the refresh token.
    if (scope === "tokens" && this.entry?.tokens?.refresh_token !== undefined) this.refused = true
    this.update((e) => {
      // Another process refreshed meanwhile (the refresh token rotated): its tokens are good; keep them.
      if (scope === "tokens" && e.tokens?.refresh_token !== undefined && e.tokens.refresh_token !== this.used) return e
      if (scope === "all") return undefined
      const { clientInformation: _c, tokens: _t, discovery: _d, ...rest } = e
      return {
        ...rest,
        ...(scope !== "client" && e.clientInformation !== undefined ? { clientInformation: e.clientInformation } : {}),
        ...(scope !== "tokens" && e.tokens !== undefined ? { tokens: e.tokens } : {}),
        ...(scope !== "discovery" && e.discovery !== undefined ? { discovery: e.discovery } : {})
      }
    })
  }

  saveDiscoveryState(discovery: OAuthDiscoveryState): void {
    this.discovered = discovery
    // In the background, a server never logged in to gets no file for this (only for a refusal's `wanted`).
    if (this.options.login !== undefined || this.entry !== undefined) this.update((e) => ({ ...e, discovery }))
  }

  /**
   * Discovery is done afresh once per provider (a connection, a login): the protected resource may
   * have moved to another authorization server since the last login, and a registration or token
   * of the old one must then not be used there (the SDK drops those whose issuer differs). The
   * saved metadata URL is kept: some servers name it only in a 401.
   */
  discoveryState(): OAuthDiscoveryState | undefined {
    if (this.discovered !== undefined) return this.discovered
    const url = this.entry?.discovery?.resourceMetadataUrl ?? this.entry?.wanted?.resourceMetadataUrl
    return url === undefined ? undefined : ({ resourceMetadataUrl: url } as OAuthDiscoveryState)
  }

  private loginNeeded(why: string): LoginNeeded {
    const discovery = this.discovered
    if (discovery !== undefined && discovery.resourceMetadata === undefined) {
      return new LoginNeeded(this.options.name, why, "token")
    }
    const challenge = this.challenge
    const entry = this.entry
    if (
      challenge?.status === 403 &&
      challenge.scope !== undefined &&
      entry?.asked !== undefined &&
      scopesOf(challenge.scope).every((s) => scopesOf(entry.asked).includes(s))
    ) {
      return new LoginNeeded(this.options.name, why, "scope-refused", challenge.scope)
    }
    // The next login asks for what this server asked for (and what the last one got: SEP-2350's union).
    const scope = scopeUnion(entry?.wanted?.scope, challenge?.scope)
    const resourceMetadataUrl = challenge?.resourceMetadataUrl ?? entry?.wanted?.resourceMetadataUrl
    if (scope !== undefined || resourceMetadataUrl !== undefined) {
      this.update((e) => ({
        ...e,
        wanted: {
          ...(scope === undefined ? {} : { scope }),
          ...(resourceMetadataUrl === undefined ? {} : { resourceMetadataUrl })
        }
      }))
    }
    return new LoginNeeded(this.options.name, why, "login", scope)
  }
}

/** The provider a background connection uses: saved tokens, refreshed; a missing login fails naming the command. */
export const backgroundProvider = (
  stateDir: string,
  serverUrl: string,
  name: string,
  settings: OAuthClientSettings | undefined,
  refresh?: ProviderOptions["refresh"]
): StoredOAuthProvider =>
  new StoredOAuthProvider({
    stateDir,
    serverUrl,
    name,
    ...(settings === undefined ? {} : { settings }),
    ...(refresh === undefined ? {} : { refresh })
  })
