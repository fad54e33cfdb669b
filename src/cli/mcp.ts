/**
 * `freecode-tools mcp [--root DIR] [--config FILE] [--http PORT [--session-idle MS]]`: the tool
 * system served to any MCP client, over stdio by default or streamable HTTP on 127.0.0.1:PORT/mcp.
 * Every call goes through the Dispatcher; nobody can answer an approval prompt, so a call that
 * asks is refused with the reason. Runs until the client closes stdin (stdio) or the process is
 * stopped (HTTP). Over HTTP a session idle for `--session-idle` ends, with all its state.
 */

import type { Server } from "@modelcontextprotocol/sdk/server/index.js"
import { ConfigProvider, Context, Effect, Fiber, Option } from "effect"
import { Command, Flag } from "effect/cli"
import { Dispatcher } from "../dispatch/dispatcher.ts"
import type { HttpServing } from "../mcp/serve.ts"
import { DefaultMode } from "../permission/engine.ts"
import { mcpPrompter } from "../prompt/mcp-elicitation.ts"
import { PrompterSource } from "../prompt/prompter.ts"
import { SandboxByDefault } from "../sandbox/sandbox.ts"
import { positiveSetting, SESSION_IDLE_NAME, SessionIdleMs } from "../session/sessions.ts"
import { plural } from "../text/plural.ts"
import { Misuse } from "./errors.ts"
import { profile, session, systemFlags } from "./flags.ts"
import { Io } from "./io.ts"
import { announceAutoDeferralWhenReady, buildToolSystem, checkOptions, sandboxState } from "./system.ts"

// The MCP SDK's server side (with zod and hono, ~20 MB resident) is loaded only by `mcp`, not by
// every command of the CLI.
const loadServe = Effect.promise(() => import("../mcp/serve.ts"))

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
  { ...systemFlags, profile, session, http, sessionIdle, store },
  Effect.fn("cli.mcp")(
    function* (input) {
      const io = yield* Io
      const setup = yield* checkOptions(input)
      if (Option.isNone(input.http) && Option.isSome(input.store)) {
        return yield* new Misuse({
          message:
            "--store applies to mcp --http, where several replicas can serve one set of sessions; over stdio the one session lives in this process."
        })
      }
      if (Option.isNone(input.http) && Option.isSome(input.sessionIdle)) {
        return yield* new Misuse({
          message: "--session-idle applies to mcp --http; over stdio the one session lasts as long as the client."
        })
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
      serving = yield* serveHttp(system, port).pipe(
        Effect.mapError((e) => new Misuse({ message: `cannot listen on 127.0.0.1:${port}: ${e.message}` }))
      )
      yield* io.err(`freecode-tools mcp: serving ${setup.root} at ${serving.url}; ${yield* sandboxState(system)}\n`)
      yield* Effect.forkScoped(announceAutoDeferralWhenReady(system))
      return yield* Effect.never
    },
    Effect.scoped,
    Effect.provideService(ConfigProvider.ConfigProvider, mcpDefaults)
  )
).pipe(
  Command.withDescription(
    "Serve the tools to an MCP client: over stdio (add `npx freecode-tools mcp` to the client's config), or with --http PORT over streamable HTTP at http://127.0.0.1:PORT/mcp. Calls go through the same permissions and budgets as `call`, in acceptEdits mode with bash in the OS sandbox where it is available (docs/sandbox.md); what still asks goes to the person through the client's elicitation, or is refused naming the rule to add."
  ),
  Command.withShortDescription("Serve the tools over MCP (stdio or HTTP)")
)
