/**
 * `freecode-tools mcp-auth login|logout|status [SERVER] [--root DIR] [--config FILE]`: log in to
 * a remote MCP server that asks for OAuth, out of it, or see whether there is a login. SERVER is
 * a server's name in the project's mcpServers (.mcp.json, freecode.json) or its URL. The login
 * prints the URL to open; the person logs in there and is sent back to a listener on
 * 127.0.0.1. Logins are kept per server and user in the state folder; no token is ever printed.
 */
import { Effect, Option, Path } from "effect"
import { Argument, Command, Flag } from "effect/cli"
import { LocalFs } from "../fs/local-fs.ts"
import { oauthSettingsOf } from "../mcp/auth/client-secret.ts"
import { expandEnv, isStdio, loadMcpServers, type McpServers, type OAuthClientConfig } from "../mcp/config.ts"
import { stateDirConfig } from "../session/location.ts"
import { ExitCode, Misuse } from "./errors.ts"
import { config, root } from "./flags.ts"
import { Io } from "./io.ts"

// The SDK's OAuth client (with zod) loads only when a login is made or forgotten.
const loadLogin = Effect.promise(() => import("../mcp/auth/login.ts"))

const server = Argument.String("server").pipe(
  Argument.withMetavar("SERVER"),
  Argument.withDescription("A server's name in mcpServers (.mcp.json, freecode.json), or its https URL.")
)

interface Target {
  readonly name: string
  readonly url: string
  /** The server's `oauth` config (its client secret, if any, is read only when logging in). */
  readonly settings?: typeof OAuthClientConfig.Type
}

const servers = Effect.fnUntraced(function* (input: {
  readonly root: Option.Option<string>
  readonly config: Option.Option<string>
}) {
  const path = yield* Path.Path
  const dir = path.resolve(Option.getOrElse(input.root, () => "."))
  return yield* loadMcpServers(dir, Option.getOrUndefined(input.config)).pipe(
    Effect.provide(LocalFs.layer),
    Effect.mapError((e) => new Misuse({ message: e.message }))
  )
})

/** Tokens travel to the server: over https, or plain http only to this machine. */
const checkedUrl = (name: string, href: string, settings: Target["settings"]): Effect.Effect<Target, Misuse> => {
  let url: URL
  try {
    url = new URL(href)
  } catch {
    return Effect.fail(new Misuse({ message: `${name}: its url ${href} is not a URL.` }))
  }
  const local = url.protocol === "http:" && ["127.0.0.1", "[::1]", "localhost"].includes(url.hostname)
  if (url.protocol !== "https:" && !local) {
    return Effect.fail(
      new Misuse({ message: `${name}: ${href}: log in over https only (plain http on this machine only).` })
    )
  }
  return Effect.succeed({ name, url: url.href, ...(settings === undefined ? {} : { settings }) })
}

/** SERVER as a configured HTTP server (its url's ${VAR}s expanded, as a connection does) or a URL. */
const targetOf = (name: string, configured: McpServers): Effect.Effect<Target, Misuse> => {
  const entry = configured[name]
  if (entry !== undefined) {
    if (isStdio(entry)) {
      return Effect.fail(
        new Misuse({ message: `${name} is a stdio server; OAuth is for servers reached over HTTP (a "url").` })
      )
    }
    return checkedUrl(name, expandEnv(entry.url, process.env), entry.oauth)
  }
  if (!URL.canParse(name)) {
    const names = Object.keys(configured)
    return Effect.fail(
      new Misuse({
        message: `${name} is neither a server in mcpServers (${names.length === 0 ? "none here" : names.join(", ")}) nor a URL.`
      })
    )
  }
  return checkedUrl(name, name, undefined)
}

const stateDir = stateDirConfig.pipe(Effect.mapError((e) => new Misuse({ message: e.message })))

const failed = (io: Io["Service"], message: string) =>
  Effect.andThen(io.err(`freecode-tools mcp-auth: ${message}\n`), Effect.fail(new ExitCode({ code: 1 })))

/** Runs `run`; a failure is said on stderr and exits 1. */
const attempt = <A>(io: Io["Service"], what: string, run: () => Promise<A>) =>
  Effect.tryPromise({ try: run, catch: (e) => (e instanceof Error ? e.message : String(e)) }).pipe(
    Effect.catch((message) => failed(io, `${what}: ${message}`))
  )

const when = (ms: number) => new Date(ms).toISOString().replace(/\.\d+Z$/, "Z")

const loginCommand = Command.make(
  "login",
  {
    server,
    root,
    config,
    timeout: Flag.Int("timeout").pipe(
      Flag.withMetavar("SECONDS"),
      Flag.withDescription("How long to wait for the person to log in (default 300)."),
      Flag.withDefault(300)
    )
  },
  Effect.fn("cli.mcpAuth.login")(function* (input) {
    const io = yield* Io
    const target = yield* targetOf(input.server, yield* servers(input))
    const dir = yield* stateDir
    const { login } = yield* loadLogin
    const path = yield* Path.Path
    const projectRoot = path.resolve(Option.getOrElse(input.root, () => "."))
    const result = yield* attempt(io, `cannot log in to ${target.name}`, async () => {
      const settings = oauthSettingsOf(target.settings, projectRoot)
      return login({
        stateDir: dir,
        serverUrl: target.url,
        name: target.name,
        ...(settings === undefined ? {} : { settings }),
        timeoutMs: Math.max(1, input.timeout) * 1000,
        // The URL only: it carries no secret (the code comes back to our listener, PKCE-bound).
        open: (url) =>
          void process.stderr.write(`Open this URL in a browser to log in to ${target.name}:\n\n  ${url.href}\n\n`)
      })
    })
    if (result.kind === "open") {
      return yield* io.out(`${target.name} answered ${result.status} without a token: it asks for no login.\n`)
    }
    yield* io.out(
      `Logged in to ${target.name}${result.scope === undefined ? "" : ` (scope ${result.scope})`}${result.expiresAt === undefined ? "" : `; the access token ends at ${when(result.expiresAt)} and is refreshed as needed`}.\n`
    )
  })
).pipe(
  Command.withDescription(
    "Log in to SERVER: prints the URL to open, waits for the person to come back, saves the tokens."
  )
)

const logoutCommand = Command.make(
  "logout",
  { server, root, config },
  Effect.fn("cli.mcpAuth.logout")(function* (input) {
    const io = yield* Io
    const target = yield* targetOf(input.server, yield* servers(input))
    const dir = yield* stateDir
    const { logout } = yield* loadLogin
    const path = yield* Path.Path
    const projectRoot = path.resolve(Option.getOrElse(input.root, () => "."))
    // A client registered by hand revokes with its secret, as it logged in (read only if needed).
    const out = yield* attempt(io, `cannot log out of ${target.name}`, () =>
      logout(dir, target.url, () => oauthSettingsOf(target.settings, projectRoot))
    )
    if (!out.had) return yield* io.out(`Not logged in to ${target.name}; nothing to forget.\n`)
    yield* io.out(
      `Logged out of ${target.name}: the saved login is gone${out.revoked === true ? " and the authorization server revoked the token" : out.revoked === "unsupported" ? "; the authorization server offers no revocation, so the token lives until it expires" : `; the authorization server did not confirm the revocation (${out.why ?? "no answer"})`}.\n`
    )
  })
).pipe(
  Command.withDescription("Log out of SERVER: revokes the token where the server allows it, and forgets the login.")
)

const statusCommand = Command.make(
  "status",
  { server: Argument.optional(server), root, config },
  Effect.fn("cli.mcpAuth.status")(function* (input) {
    const io = yield* Io
    const configured = yield* servers(input)
    const targets = Option.isSome(input.server)
      ? [yield* targetOf(input.server.value, configured)]
      : Object.entries(configured).flatMap(([name, entry]) =>
          isStdio(entry) ? [] : [{ name, url: expandEnv(entry.url, process.env) }]
        )
    if (targets.length === 0) return yield* io.out("No MCP server here is reached over HTTP.\n")
    const dir = yield* stateDir
    const { loginStatus } = yield* loadLogin
    for (const target of targets) {
      const status = yield* attempt(io, `cannot read the login for ${target.name}`, async () =>
        loginStatus(dir, target.url)
      )
      yield* io.out(
        status.loggedIn
          ? `${target.name}: logged in${status.issuer === undefined ? "" : ` at ${status.issuer}`}${status.scope === undefined ? "" : ` (scope ${status.scope})`}${status.expiresAt === undefined ? "" : `; access token ends ${when(status.expiresAt)}`}${status.refreshable ? ", refreshable" : ""}\n`
          : `${target.name}: not logged in\n`
      )
    }
  })
).pipe(
  Command.withDescription(
    "Whether there is a login for SERVER (or every HTTP server in mcpServers); never shows a token."
  )
)

export const mcpAuthCommand = Command.make("mcp-auth").pipe(
  Command.withSubcommands([loginCommand, logoutCommand, statusCommand]),
  Command.withDescription(
    "Log in to remote MCP servers that ask for OAuth 2.1 (login), out of them (logout), or see the logins (status). Logins are kept per server and user in the state folder, mode 0600; connections use and refresh them."
  ),
  Command.withShortDescription("Log in to and out of remote MCP servers (OAuth)")
)
