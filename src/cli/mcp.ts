/**
 * `freecode-tools mcp [--root DIR] [--config FILE] [--http PORT [--host ADDR] [--token-file FILE |
 * --auth none | --auth oauth --issuer URL …] [--session-idle MS]]`: the tool system served to any
 * MCP client, over stdio by default or streamable HTTP on 127.0.0.1:PORT/mcp. Over HTTP every
 * request carries a bearer token (a random one printed once on stderr as `token=…`, the one in
 * --token-file, or with --auth oauth an access token from the issuer: mcp-oauth-flags.ts).
 * Both protocol eras, per client. Every call goes through the Dispatcher; what asks goes to the
 * person through the client (elicitation, or a 2026 client's input_required round), or is
 * refused with the reason. Runs until the client closes stdin (stdio) or the process is
 * stopped (HTTP). Over HTTP a session idle for `--session-idle` ends, with all its state.
 */

import * as NodeFs from "node:fs"
import type { Server } from "@modelcontextprotocol/sdk/server/index.js"
import { ConfigProvider, Context, Effect, Fiber, Option } from "effect"
import { Command, Flag } from "effect/cli"
import { Dispatcher } from "../dispatch/dispatcher.ts"
import { type HttpAuth, isLoopback, randomToken, tokenProblem } from "../mcp/http-guard.ts"
import type { HttpServing } from "../mcp/transports.ts"
import { DefaultMode } from "../permission/engine.ts"
import { mcpPrompter } from "../prompt/mcp-elicitation.ts"
import { PrompterSource } from "../prompt/prompter.ts"
import { SandboxByDefault } from "../sandbox/sandbox.ts"
import { positiveSetting, SESSION_IDLE_NAME, SessionIdleMs } from "../session/sessions.ts"
import { plural } from "../text/plural.ts"
import { Misuse } from "./errors.ts"
import { profile, session, systemFlags } from "./flags.ts"
import { Io } from "./io.ts"
import { oauthFlags, oauthFlagsGiven, oauthResourceAuth, oauthServingLine } from "./mcp-oauth-flags.ts"
import { announceAutoDeferralWhenReady, buildToolSystem, checkOptions, sandboxState } from "./system.ts"

// The MCP SDK's server side (with zod and hono, ~20 MB resident) is loaded only by `mcp`, not by
// every command of the CLI.
const loadServe = Effect.promise(() => import("../mcp/transports.ts"))

/**
 * Read de-duplication is off by default when serving MCP: a client may prune or compact its
 * context without telling the server, and a pointer to a result the model no longer has costs a
 * wasted turn. FREECODE_READ_DEDUP=1 turns it on for a client that keeps every result.
 */
const mcpDefaults = ConfigProvider.orElse(
  ConfigProvider.fromEnv(),
  ConfigProvider.fromUnknown({ FREECODE_READ_DEDUP: "0" })
)

const http = Flag.Int("http").pipe(
  Flag.withMetavar("PORT"),
  Flag.withDescription("Serve streamable HTTP on 127.0.0.1:PORT/mcp instead of stdio (0: any free port)."),
  Flag.optional
)

const host = Flag.String("host").pipe(
  Flag.withMetavar("ADDR"),
  Flag.withDescription(
    "--http: the IP address to listen on (default 127.0.0.1; 0.0.0.0 or :: for every interface). The token is required on any address but loopback."
  ),
  Flag.optional
)

const tokenFile = Flag.String("token-file").pipe(
  Flag.withMetavar("FILE"),
  Flag.withDescription(
    "--http: the bearer token clients must send, read from FILE (one line, at least 16 characters of A-Z a-z 0-9 _ -), instead of a random one printed at start."
  ),
  Flag.optional
)

const authMode = Flag.Literals("auth", ["token", "none", "oauth"] as const).pipe(
  Flag.withDescription(
    "--http: `token` (default) requires Authorization: Bearer <token> on every request; `none` lets any process on this machine call, and is refused unless the address is loopback; `oauth` requires an access token from the authorization server --issuer names (docs/mcp.md, OAuth)."
  ),
  Flag.optional
)

/** The token in `file`: its one line, checked. */
const readTokenFile = (file: string) =>
  Effect.try({
    try: () => NodeFs.readFileSync(file, "utf8").replace(/\r?\n$/, ""),
    catch: (e) =>
      new Misuse({ message: `--token-file ${file}: cannot read it (${e instanceof Error ? e.message : String(e)}).` })
  }).pipe(
    Effect.flatMap((token) => {
      const problem = tokenProblem(token)
      return problem === undefined
        ? Effect.succeed(token)
        : Effect.fail(new Misuse({ message: `--token-file ${file}: ${problem}.` }))
    })
  )

/** How long an HTTP session may sit unused before it ends, when neither the flag nor the environment says. */
export const DEFAULT_HTTP_SESSION_IDLE_MS = 5 * 60_000

const sessionIdle = Flag.Int("session-idle").pipe(
  Flag.withMetavar("MS"),
  Flag.withDescription(
    `--http: an MCP session unused for this many milliseconds ends (its transport, state and background jobs); the client then initializes again. Default: ${SESSION_IDLE_NAME}, else ${DEFAULT_HTTP_SESSION_IDLE_MS} (5 minutes).`
  ),
  Flag.optional
)

const store = Flag.String("store").pipe(
  Flag.withMetavar("URL"),
  Flag.withDescription(
    "--http: keep outputs, grants, todos and job records in a store shared by replicas: postgres://user@host:port/db, or a node:sqlite file (docs/scaling.md)."
  ),
  Flag.optional
)

export const mcpCommand = Command.make(
  "mcp",
  { ...systemFlags, profile, session, http, host, tokenFile, authMode, sessionIdle, store, ...oauthFlags },
  Effect.fn("cli.mcp")(
    function* (input) {
      const io = yield* Io
      const setup = yield* checkOptions(input)
      if (Option.isNone(input.http)) {
        const httpOnly = [
          Option.isSome(input.sessionIdle) ? "--session-idle" : undefined,
          Option.isSome(input.host) ? "--host" : undefined,
          Option.isSome(input.tokenFile) ? "--token-file" : undefined,
          Option.isSome(input.authMode) ? "--auth" : undefined,
          Option.isSome(input.store) ? "--store" : undefined,
          ...oauthFlagsGiven(input)
        ].filter((f) => f !== undefined)
        if (httpOnly.length > 0) {
          return yield* new Misuse({
            message: `${httpOnly.join(", ")} applies to mcp --http; over stdio the one client is the parent process and its session lasts as long as it.`
          })
        }
      }
      if (Option.isNone(input.http)) {
        // Over stdio there is one client: `question` asks it through MCP elicitation, when it can.
        let served: Server | undefined
        const system = yield* buildToolSystem(setup, { awaitMcpServers: false }).pipe(
          Effect.provideService(
            PrompterSource,
            mcpPrompter(() => served)
          ),
          Effect.provideService(DefaultMode, "acceptEdits"),
          Effect.provideService(SandboxByDefault, true)
        )
        yield* Effect.forkScoped(announceAutoDeferralWhenReady(system))
        // The serving line names the sandbox, whose probe starts bubblewrap once: it runs while the
        // SDK's server side loads, so tools/list does not wait for it.
        const sandbox = yield* Effect.forkChild(sandboxState(system))
        const { serveStdio } = yield* loadServe
        // One line on stderr (stdout is the protocol's), so a terminal shows the server is up, not hung.
        const tools = yield* Context.get(system, Dispatcher).tools
        yield* io.err(
          `freecode-tools mcp: serving ${plural(tools.length, "tool")} for ${setup.root} over stdio; ${yield* Fiber.join(sandbox)}\n`
        )
        return yield* serveStdio(
          system,
          (server) => {
            served = server
          },
          setup.session
        )
      }
      if (setup.session !== undefined) {
        return yield* new Misuse({
          message: "--session applies to mcp over stdio (one client); over --http each MCP session is its own."
        })
      }
      const address = Option.getOrElse(input.host, () => "127.0.0.1")
      const mode = Option.getOrUndefined(input.authMode)
      const noAuth = mode === "none"
      if (mode !== undefined && mode !== "token" && Option.isSome(input.tokenFile)) {
        return yield* new Misuse({ message: `--auth ${mode} and --token-file contradict each other; give one.` })
      }
      if (noAuth && !isLoopback(address)) {
        return yield* new Misuse({
          message: `--auth none is allowed on a loopback address only (127.0.0.1, ::1), and ${address} is not one: anyone who reaches it could run commands. Use the token (the default) or --token-file.`
        })
      }
      const oauth = yield* oauthResourceAuth(input, mode === "oauth")
      const auth: HttpAuth = noAuth
        ? { kind: "none" }
        : oauth !== undefined
          ? oauth
          : {
              kind: "token",
              token: Option.isSome(input.tokenFile) ? yield* readTokenFile(input.tokenFile.value) : randomToken()
            }
      const idle = Option.getOrUndefined(input.sessionIdle)
      if (idle !== undefined && !(Number.isInteger(idle) && idle > 0)) {
        return yield* new Misuse({ message: `--session-idle ${idle} is not a positive number of milliseconds.` })
      }
      const fromEnv = yield* positiveSetting(SESSION_IDLE_NAME).pipe(
        Effect.mapError((e) => new Misuse({ message: e.message }))
      )
      const idleMs = idle ?? fromEnv ?? DEFAULT_HTTP_SESSION_IDLE_MS
      // Over HTTP each MCP session has its own server: `question` asks the asking session's client.
      let serving: HttpServing | undefined
      const system = yield* buildToolSystem(setup, { awaitMcpServers: false }).pipe(
        Effect.provideService(
          PrompterSource,
          mcpPrompter((sessionId) => (sessionId === undefined ? undefined : serving?.serverFor(sessionId)))
        ),
        Effect.provideService(DefaultMode, "acceptEdits"),
        Effect.provideService(SandboxByDefault, true),
        Effect.provideService(SessionIdleMs, idleMs)
      )
      const port = input.http.value
      if (!Number.isInteger(port) || port < 0 || port > 65535) {
        return yield* new Misuse({ message: `--http ${port} is not a port (0-65535).` })
      }
      const { serveHttp } = yield* loadServe
      serving = yield* serveHttp(system, port, { host: address, auth }).pipe(
        Effect.mapError((e) => new Misuse({ message: `cannot listen on ${address}:${port}: ${e.message}` }))
      )
      yield* io.err(`freecode-tools mcp: serving ${setup.root} at ${serving.url}; ${yield* sandboxState(system)}\n`)
      // Printed once, here; never logged elsewhere. A token from a file is not repeated.
      yield* io.err(
        auth.kind === "none"
          ? "freecode-tools mcp: --auth none: no token; any process on this machine that reaches the port can call the tools\n"
          : auth.kind === "oauth"
            ? oauthServingLine(auth, serving.url)
            : Option.isSome(input.tokenFile)
              ? `freecode-tools mcp: clients must send the token in ${input.tokenFile.value} as Authorization: Bearer <token>\n`
              : `freecode-tools mcp: token=${auth.token} (clients send it as Authorization: Bearer <token>)\n`
      )
      yield* Effect.forkScoped(announceAutoDeferralWhenReady(system))
      return yield* Effect.never
    },
    Effect.scoped,
    Effect.provideService(ConfigProvider.ConfigProvider, mcpDefaults)
  )
).pipe(
  Command.withDescription(
    "Serve the tools to an MCP client: over stdio (add `npx freecode-tools mcp` to the client's config), or with --http PORT over streamable HTTP at http://127.0.0.1:PORT/mcp (every request sends the token printed at start as Authorization: Bearer <token>, or with --auth oauth an access token from --issuer); both ways in the 2025-11-25 and the 2026-07-28 revision, per client. Calls go through the same permissions and budgets as `call`, in acceptEdits mode with bash in the OS sandbox where it is available (docs/sandbox.md); what still asks goes to the person through the client (elicitation, or a 2026 client's input_required round), or is refused naming the rule to add."
  ),
  Command.withShortDescription("Serve the tools over MCP (stdio or HTTP)")
)
