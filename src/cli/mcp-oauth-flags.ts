/**
 * The flags of `mcp --http --auth oauth` (the server as an OAuth 2.1 resource server) and their
 * checks: `--issuer URL` (required), `--audience URL`, `--scope "S1 S2"`,
 * `--introspection-client FILE`.
 */
import * as NodeFs from "node:fs"
import { Effect, Option } from "effect"
import { Flag } from "effect/cli"
import { metadataUrlOf } from "../mcp/auth/metadata-url.ts"
import type { OAuthIntrospectionClient, OAuthResourceAuth } from "../mcp/auth/verify.ts"
import { isLoopback } from "../mcp/http-guard.ts"
import { Misuse } from "./errors.ts"

export const oauthFlags = {
  issuer: Flag.String("issuer").pipe(
    Flag.withMetavar("URL"),
    Flag.withDescription(
      "--auth oauth: the authorization server whose access tokens are accepted (its issuer identifier; https, or http on loopback)."
    ),
    Flag.optional
  ),
  audience: Flag.String("audience").pipe(
    Flag.withMetavar("URL"),
    Flag.withDescription(
      "--auth oauth: this server's resource identifier, which tokens must name as audience (default: the served /mcp URL; give the public URL behind a proxy)."
    ),
    Flag.optional
  ),
  scope: Flag.String("scope").pipe(
    Flag.withMetavar("SCOPES"),
    Flag.withDescription(
      "--auth oauth: scopes every token must carry, space-separated (403 insufficient_scope otherwise)."
    ),
    Flag.optional
  ),
  introspectionClient: Flag.String("introspection-client").pipe(
    Flag.withMetavar("FILE"),
    Flag.withDescription(
      '--auth oauth: check tokens by introspection (RFC 7662) as this client, from a JSON file {"client_id", "client_secret"} of mode 0600, instead of as JWTs against the issuer\'s keys.'
    ),
    Flag.optional
  )
}

interface OAuthInput {
  readonly issuer: Option.Option<string>
  readonly audience: Option.Option<string>
  readonly scope: Option.Option<string>
  readonly introspectionClient: Option.Option<string>
}

/** The OAuth flags given, by name. */
export const oauthFlagsGiven = (input: OAuthInput): ReadonlyArray<string> =>
  [
    Option.isSome(input.issuer) ? "--issuer" : undefined,
    Option.isSome(input.audience) ? "--audience" : undefined,
    Option.isSome(input.scope) ? "--scope" : undefined,
    Option.isSome(input.introspectionClient) ? "--introspection-client" : undefined
  ].filter((f) => f !== undefined)

/** A URL whose contents are trusted must not travel in clear text, except on this machine. */
const checkedUrl = (flag: string, value: string, secure: boolean): Effect.Effect<string, Misuse> => {
  let url: URL
  try {
    url = new URL(value)
  } catch {
    return Effect.fail(new Misuse({ message: `${flag} ${value} is not a URL.` }))
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") {
    return Effect.fail(new Misuse({ message: `${flag} ${value}: give an https URL.` }))
  }
  if (secure && url.protocol === "http:" && !isLoopback(url.hostname) && url.hostname !== "localhost") {
    return Effect.fail(
      new Misuse({
        message: `${flag} ${value}: give an https URL (plain http only on this machine, 127.0.0.1 or ::1).`
      })
    )
  }
  return Effect.succeed(value)
}

const readIntrospectionClient = (file: string): Effect.Effect<OAuthIntrospectionClient, Misuse> =>
  Effect.try({
    try: () => {
      const stat = NodeFs.statSync(file)
      if ((stat.mode & 0o077) !== 0) {
        throw new Error(`it can be read by others (mode ${(stat.mode & 0o777).toString(8)}); run: chmod 600 ${file}`)
      }
      const parsed = JSON.parse(NodeFs.readFileSync(file, "utf8")) as { client_id?: unknown; client_secret?: unknown }
      if (typeof parsed.client_id !== "string" || typeof parsed.client_secret !== "string") {
        throw new Error('it must hold {"client_id": "…", "client_secret": "…"}')
      }
      return { clientId: parsed.client_id, clientSecret: parsed.client_secret }
    },
    catch: (e) =>
      new Misuse({ message: `--introspection-client ${file}: ${e instanceof Error ? e.message : String(e)}.` })
  })

/** The resource-server settings when `--auth oauth` was given (`on`); misuse for stray or missing flags. */
export const oauthResourceAuth = Effect.fnUntraced(function* (
  input: OAuthInput,
  on: boolean
): Effect.fn.Return<OAuthResourceAuth | undefined, Misuse> {
  if (!on) {
    const stray = oauthFlagsGiven(input)
    if (stray.length === 0) return undefined
    return yield* new Misuse({ message: `${stray.join(", ")} applies to --auth oauth only.` })
  }
  if (Option.isNone(input.issuer)) {
    return yield* new Misuse({
      message: "--auth oauth needs --issuer URL: the authorization server whose access tokens this server accepts."
    })
  }
  const issuer = yield* checkedUrl("--issuer", input.issuer.value, true)
  const audience = Option.isSome(input.audience)
    ? yield* checkedUrl("--audience", input.audience.value, false)
    : undefined
  const scopes = Option.isSome(input.scope) ? input.scope.value.split(/\s+/).filter((s) => s !== "") : []
  const introspection = Option.isSome(input.introspectionClient)
    ? yield* readIntrospectionClient(input.introspectionClient.value)
    : undefined
  return {
    kind: "oauth",
    issuer,
    ...(audience === undefined ? {} : { audience }),
    ...(scopes.length === 0 ? {} : { scopes }),
    ...(introspection === undefined ? {} : { introspection })
  }
})

/** The serving line's second half: where clients log in and where the metadata is. */
export const oauthServingLine = (auth: OAuthResourceAuth, servedUrl: string): string => {
  const resource = auth.audience ?? servedUrl
  const metadata = metadataUrlOf(resource).href
  return `freecode-tools mcp: OAuth: clients send an access token from ${auth.issuer} for ${resource} (checked by ${auth.introspection === undefined ? "its keys" : "introspection"}); metadata at ${metadata}\n`
}
