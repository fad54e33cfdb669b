/**
 * Bearer tokens checked against the authorization server `mcp --http --auth oauth` was given:
 * a JWT access token (RFC 9068) by its issuer's published keys (JWKS), or any token by asking
 * the issuer (introspection, RFC 7662). Either way the token must be for this server (its
 * audience or resource), from that issuer, unexpired, and carry the scopes required. jose does
 * the signature and claim checks: a well-kept library, not hand-written cryptography.
 *
 * A check that cannot decide (the issuer is unreachable, says something unreadable) refuses.
 */
import { createRemoteJWKSet, errors as JoseErrors, type JWTPayload, jwtVerify } from "jose"

export interface OAuthIntrospectionClient {
  readonly clientId: string
  readonly clientSecret: string
}

/** The resource-server mode of `mcp --http`. */
export interface OAuthResourceAuth {
  readonly kind: "oauth"
  /** The authorization server's issuer identifier (its metadata is found from it, RFC 8414). */
  readonly issuer: string
  /** This server's resource identifier, which tokens must name as audience. Default: the served /mcp URL. */
  readonly audience?: string
  /** Scopes every request's token must carry (also advertised as scopes_supported). */
  readonly scopes?: ReadonlyArray<string>
  /** Check tokens by introspection (as this client) instead of as JWTs against the JWKS. */
  readonly introspection?: OAuthIntrospectionClient
}

export type Verdict =
  | { readonly ok: true; readonly subject?: string; readonly scopes: ReadonlyArray<string> }
  /** 401 invalid_token (or no token at all: `error` undefined). */
  | { readonly ok: false; readonly status: 401; readonly error?: "invalid_token"; readonly description: string }
  | { readonly ok: false; readonly status: 403; readonly error: "insufficient_scope"; readonly description: string }
  /** The check could not be made; refused. */
  | { readonly ok: false; readonly status: 503; readonly description: string }

interface IssuerMetadata {
  readonly issuer: string
  readonly jwks_uri?: string
  readonly introspection_endpoint?: string
}

/** Asymmetric algorithms only: a JWKS never holds an HMAC secret, and "none" is never a signature. */
const ALGORITHMS = ["RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA", "Ed25519"]

const ACCESS_TOKEN_TYPES = new Set(["at+jwt", "application/at+jwt"])

/** The metadata URLs RFC 8414 and OpenID Connect Discovery put an issuer's metadata at, in that order. */
export const metadataUrls = (issuer: string): ReadonlyArray<URL> => {
  const url = new URL(issuer)
  const path = url.pathname === "/" ? "" : url.pathname.replace(/\/$/, "")
  return [
    new URL(`/.well-known/oauth-authorization-server${path}`, url.origin),
    new URL(`/.well-known/openid-configuration${path}`, url.origin),
    ...(path === "" ? [] : [new URL(`${path}/.well-known/openid-configuration`, url.origin)])
  ]
}

const fetchMetadata = async (issuer: string): Promise<IssuerMetadata> => {
  const tried: Array<string> = []
  for (const url of metadataUrls(issuer)) {
    const res = await fetch(url, { headers: { accept: "application/json" }, signal: AbortSignal.timeout(10_000) })
    if (!res.ok) {
      tried.push(`${url.href}: ${res.status}`)
      continue
    }
    const body = (await res.json()) as Partial<IssuerMetadata>
    // RFC 8414 §3.3: metadata that names another issuer is not this issuer's.
    if (body.issuer !== issuer) {
      throw new Error(`${url.href} names the issuer ${JSON.stringify(body.issuer)}, not ${issuer}`)
    }
    return body as IssuerMetadata
  }
  throw new Error(`no authorization server metadata for ${issuer} (${tried.join("; ")})`)
}

const scopesOf = (payload: { scope?: unknown; scp?: unknown }): ReadonlyArray<string> =>
  typeof payload.scope === "string"
    ? payload.scope.split(" ").filter((s) => s !== "")
    : Array.isArray(payload.scp)
      ? payload.scp.filter((s): s is string => typeof s === "string")
      : []

const audiencesOf = (aud: unknown): ReadonlyArray<string> =>
  typeof aud === "string" ? [aud] : Array.isArray(aud) ? aud.filter((a): a is string => typeof a === "string") : []

/** A refusal. What a token claimed may be quoted in it, so it is cut short: a header, not a dump. */
const invalid = (description: string): Verdict => ({
  ok: false,
  status: 401,
  error: "invalid_token",
  description: description.length > 400 ? `${description.slice(0, 400)}…` : description
})

const claimsVerdict = (
  config: OAuthResourceAuth,
  claims: { sub?: unknown; scope?: unknown; scp?: unknown }
): Verdict => {
  const scopes = scopesOf(claims)
  const missing = (config.scopes ?? []).filter((s) => !scopes.includes(s))
  if (missing.length > 0) {
    return {
      ok: false,
      status: 403,
      error: "insufficient_scope",
      description: `the token lacks the scope ${missing.join(" ")} this server requires; log in again asking for it`
    }
  }
  return typeof claims.sub === "string" ? { ok: true, subject: claims.sub, scopes } : { ok: true, scopes }
}

/** Why jose refused a token, in words a client's user can act on. */
const joseVerdict = (e: unknown, config: OAuthResourceAuth, audience: string, payload?: JWTPayload): Verdict => {
  if (e instanceof JoseErrors.JWTExpired) return invalid("the token has expired; refresh it or log in again")
  if (e instanceof JoseErrors.JWTClaimValidationFailed) {
    if (e.claim === "aud") {
      const said = audiencesOf(payload?.aud).join(", ") || "nobody"
      return invalid(`the token is for ${said}, not this server (${audience}); get one for this resource`)
    }
    if (e.claim === "iss") {
      return invalid(
        `the token was issued by ${String(payload?.iss)}, not ${config.issuer}; log in at this server's authorization server`
      )
    }
    if (e.claim === "typ") return invalid("the token is not an access token (its typ is not at+jwt)")
    return invalid(`the token's ${e.claim} claim is not acceptable: ${e.reason}`)
  }
  if (e instanceof JoseErrors.JWSSignatureVerificationFailed || e instanceof JoseErrors.JWKSNoMatchingKey) {
    return invalid(`the token's signature does not verify with ${config.issuer}'s keys`)
  }
  if (e instanceof JoseErrors.JWKSTimeout || e instanceof JoseErrors.JWKSInvalid) {
    return { ok: false, status: 503, description: `cannot read ${config.issuer}'s signing keys; try again later` }
  }
  if (e instanceof JoseErrors.JOSEError)
    return invalid("the token is not a signed JWT access token from this server's issuer")
  return {
    ok: false,
    status: 503,
    description: `cannot check the token with ${config.issuer}: ${e instanceof Error ? e.message : String(e)}`
  }
}

/** Decodes a JWT's payload without trusting it: only to name, in a refusal, what it claimed. */
const unverifiedPayload = (token: string): JWTPayload | undefined => {
  try {
    return JSON.parse(Buffer.from(token.split(".")[1] ?? "", "base64url").toString("utf8")) as JWTPayload
  } catch {
    return undefined
  }
}

export interface TokenVerifier {
  readonly verify: (token: string | undefined) => Promise<Verdict>
}

/**
 * A verifier for `audience`. The issuer's metadata is read on the first token and kept once
 * read (a failure is not kept: the next token tries again); jose keeps and refreshes the keys.
 */
export const makeTokenVerifier = (config: OAuthResourceAuth, audience: string): TokenVerifier => {
  let metadata: Promise<IssuerMetadata> | undefined
  let jwks: ReturnType<typeof createRemoteJWKSet> | undefined
  const issuerMetadata = () => {
    metadata ??= fetchMetadata(config.issuer).catch((e: unknown) => {
      metadata = undefined
      throw e
    })
    return metadata
  }

  const viaJwks = async (token: string, meta: IssuerMetadata): Promise<Verdict> => {
    if (meta.jwks_uri === undefined) {
      return { ok: false, status: 503, description: `${config.issuer} publishes no jwks_uri; use introspection` }
    }
    jwks ??= createRemoteJWKSet(new URL(meta.jwks_uri))
    // Another issuer's token would fail on its signature; saying whose it is helps more. Only a refusal
    // is drawn from the unverified claim.
    const claimed = unverifiedPayload(token)?.iss
    if (claimed !== undefined && claimed !== config.issuer) {
      return invalid(
        `the token was issued by ${String(claimed)}, not ${config.issuer}; log in at this server's authorization server`
      )
    }
    try {
      const { payload, protectedHeader } = await jwtVerify(token, jwks, {
        issuer: config.issuer,
        audience,
        algorithms: ALGORITHMS
      })
      // RFC 9068 §4: an access token says so in its typ, so an ID token is never taken for one.
      if (!ACCESS_TOKEN_TYPES.has(String(protectedHeader.typ).toLowerCase())) {
        return invalid("the token is not an access token (its typ is not at+jwt)")
      }
      return claimsVerdict(config, payload)
    } catch (e) {
      return joseVerdict(e, config, audience, unverifiedPayload(token))
    }
  }

  const viaIntrospection = async (token: string, meta: IssuerMetadata, client: OAuthIntrospectionClient) => {
    if (meta.introspection_endpoint === undefined) {
      return { ok: false, status: 503, description: `${config.issuer} publishes no introspection_endpoint` } as const
    }
    const basic = Buffer.from(
      `${encodeURIComponent(client.clientId)}:${encodeURIComponent(client.clientSecret)}`
    ).toString("base64")
    const res = await fetch(meta.introspection_endpoint, {
      method: "POST",
      headers: {
        authorization: `Basic ${basic}`,
        "content-type": "application/x-www-form-urlencoded",
        accept: "application/json"
      },
      body: new URLSearchParams({ token, token_type_hint: "access_token" }),
      signal: AbortSignal.timeout(10_000)
    })
    if (res.status === 400) {
      // The issuer looked at the token and would not say (oidc-provider answers so for its JWTs):
      // that is about the token, not about us.
      const said = (await res.json().catch(() => ({}))) as { error?: unknown; error_description?: unknown }
      return invalid(
        `${config.issuer} would not introspect the token (${String(said.error_description ?? said.error ?? "400")}); send an access token issued for this server`
      )
    }
    if (!res.ok) {
      return {
        ok: false,
        status: 503,
        description: `${config.issuer}'s introspection answered ${res.status}; check the introspection client`
      } as const
    }
    const answer = (await res.json()) as Record<string, unknown>
    if (answer.active !== true) return invalid("the token is not active (expired, revoked or unknown to the issuer)")
    if (answer.iss !== undefined && answer.iss !== config.issuer) {
      return invalid(`the token was issued by ${String(answer.iss)}, not ${config.issuer}`)
    }
    if (typeof answer.exp === "number" && answer.exp * 1000 <= Date.now()) {
      return invalid("the token has expired; refresh it or log in again")
    }
    const audiences = audiencesOf(answer.aud)
    if (!audiences.includes(audience)) {
      return invalid(
        audiences.length === 0
          ? `the issuer did not say the token is for this server (${audience}); get one for this resource`
          : `the token is for ${audiences.join(", ")}, not this server (${audience}); get one for this resource`
      )
    }
    return claimsVerdict(config, answer)
  }

  return {
    verify: async (token) => {
      if (token === undefined) {
        return { ok: false, status: 401, description: `log in at ${config.issuer} and send the access token` }
      }
      let meta: IssuerMetadata
      try {
        meta = await issuerMetadata()
      } catch (e) {
        return {
          ok: false,
          status: 503,
          description: `cannot reach the authorization server to check the token: ${e instanceof Error ? e.message : String(e)}`
        }
      }
      try {
        return config.introspection === undefined
          ? await viaJwks(token, meta)
          : await viaIntrospection(token, meta, config.introspection)
      } catch (e) {
        return {
          ok: false,
          status: 503,
          description: `cannot check the token with ${config.issuer}: ${e instanceof Error ? e.message : String(e)}`
        }
      }
    }
  }
}
