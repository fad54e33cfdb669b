/**
 * What a background MCP connection answers when a server refuses it and no saved login helps
 * (client-provider.ts throws it): LoginNeeded, which says what the person can do, the refusal it
 * is built from (a WWW-Authenticate challenge, as the transport's fetch saw it), and scope
 * strings compared as sets.
 */

/** Scopes as a set: `a b` and `b a` are one scope string. */
export const scopesOf = (scope: string | undefined): ReadonlyArray<string> => (scope ?? "").split(/\s+/).filter(Boolean)

/** The union of scope strings, in first-seen order; undefined when empty. */
export const scopeUnion = (...scopes: ReadonlyArray<string | undefined>): string | undefined => {
  const all = [...new Set(scopes.flatMap(scopesOf))]
  return all.length === 0 ? undefined : all.join(" ")
}

/** What a refusing server said in its WWW-Authenticate header (seen by the transport's fetch). */
export interface Challenge {
  readonly status: number
  readonly scope?: string
  readonly resourceMetadataUrl?: string
  readonly error?: string
}

/**
 * The server refused a request and no saved login answers it. `kind` says what the person can do:
 * - `login`: run `command` (the login asks for `scope` too, when the server named one);
 * - `token`: the server publishes no OAuth metadata; its token goes in the config's headers;
 * - `scope-refused`: it wants `scope`, which the last login already asked for and did not get:
 *   logging in again would only loop, so no command is given.
 */
export class LoginNeeded extends Error {
  readonly server: string
  readonly kind: "login" | "token" | "scope-refused"
  readonly command: string | undefined
  readonly scope: string | undefined
  constructor(server: string, why: string, kind: LoginNeeded["kind"] = "login", scope?: string) {
    const command = kind === "login" ? `freecode-tools mcp-auth login ${server}` : undefined
    super(
      kind === "login"
        ? `${server} needs a login (${why}${scope === undefined ? "" : `; it asks for scope "${scope}"`}): run \`${command}\``
        : kind === "token"
          ? `${server} answered 401 and publishes no OAuth metadata: give its token in the config's "headers" ({"Authorization": "Bearer \${TOKEN}"})`
          : `${server} refuses this request for want of scope "${scope}", which the last login already asked for and the authorization server did not grant: logging in again will not help; ask whoever runs ${server} for that scope`
    )
    this.name = "LoginNeeded"
    this.server = server
    this.kind = kind
    this.command = command
    this.scope = scope
  }
}

/** The LoginNeeded behind `e` (the SDK may wrap what the provider threw), if any. */
export const loginNeededIn = (e: unknown): LoginNeeded | undefined => {
  for (let at = e, depth = 0; at !== undefined && at !== null && depth < 5; depth++) {
    if (at instanceof LoginNeeded) return at
    at = (at as { cause?: unknown }).cause
  }
  return undefined
}
