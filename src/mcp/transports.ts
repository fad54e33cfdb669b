/**
 * Serving the tool system over MCP: stdio (one client, the parent process) and streamable HTTP
 * on 127.0.0.1 (one `Server` per MCP session, so read de-duplication is per session). The HTTP
 * side refuses a request whose Host (or Origin) is not this server's address (a web page that
 * rebinds a DNS name to 127.0.0.1 cannot drive the tools), one without the bearer token (any
 * other process on the machine could reach the port), and a body over the cap, before reading it.
 *
 * An HTTP session is a session of the system's `Sessions`, under the MCP session id its calls
 * run with: its transport is one more slot there. It ends on DELETE, when it has been idle for the
 * configured time (a request in flight or an open stream is not idle), or when it is the least
 * recently used past the cap; then its transport closes, its state goes and its jobs stop, and a
 * later request with its id gets 404, so the client initializes again.
 */
import { randomUUID } from "node:crypto"
import type * as NodeHttp from "node:http"
import { isIP } from "node:net"
import { networkInterfaces } from "node:os"
import type { Server } from "@modelcontextprotocol/sdk/server/index.js"
import type { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js"
import type { Server as ModernServer } from "@modelcontextprotocol/server"
import { Context, Effect, Exit, Option, Scope, Stream } from "effect"
import { lazyImport, lazyRequire } from "../load/lazy.ts"
import { startUpOver } from "../load/start-up.ts"
import { ToolRegistry } from "../registry/registry.ts"
import { DEFAULT_MAX_SESSIONS, makeSessions, Sessions, type SessionsShape } from "../session/sessions.ts"
import type { ResourceGate } from "./auth/resource.ts"
import {
  authorized,
  discardRest,
  type HttpAuth,
  isLoopback,
  MAX_REQUEST_BYTES,
  randomToken,
  readCappedBody,
  TooLarge
} from "./http-guard.ts"
import { makeModernServing, sendWebResponse, toWebRequest } from "./modern.ts"
import { type ModernOptions, makeModernFactory } from "./modern-server.ts"
import { type MovableTransport, sessionMoving } from "./session-move.ts"
import { isLegacyOpening, ReplayTransport } from "./stdio-eras.ts"
import { LineStdioTransport } from "./stdio-transport.ts"
import type { ServedSystem } from "./tool-wire.ts"

// The HTTP side loads with serveHttp; stdio needs neither. node:http by require: an ESM import of
// it also loads Node's internal undici (for its WebSocket export), ~60 ms of CPU at start-up.
const nodeHttp = lazyRequire<typeof NodeHttp>("node:http")
const httpTransport = lazyImport(() => import("@modelcontextprotocol/sdk/server/streamableHttp.js"))
// jose and the token checks: only for --auth oauth.
const oauthGate = lazyImport(() => import("./auth/resource.ts"))
// The 2025 era's server (SDK 1.32, its zod schemas and ajv): over stdio, only for a client that
// opens with `initialize`; a 2026 client never loads it (docs/benchmarks.md, "Start-up").
const legacyServer = lazyImport(() => import("./tool-server.ts"))
const legacyTypes = lazyImport(() => import("@modelcontextprotocol/sdk/types.js"))

export interface StdioOptions {
  /** The 2026 era's approvals: where the signing key lives, how long an answer may take. */
  readonly modern?: ModernOptions
  /** Instead of the process's stdin and stdout (tests). */
  readonly stdin?: NodeJS.ReadableStream
  readonly stdout?: NodeJS.WritableStream
}

/**
 * Serves over stdin/stdout until the client closes stdin (or the scope closes), in the era the
 * client opens with (stdio-eras.ts): 2025-11-25 and older with a session and elicitation,
 * 2026-07-28 stateless. Calls of either era run under one session of the system.
 */
export const serveStdio = (
  system: ServedSystem,
  /** Told the server once it exists (the `question` tool's MCP elicitation asks through it). */
  onServer: (server: Server) => void = () => undefined,
  /** The session its calls run under (`mcp --session ID`: resumed, and kept); default a fresh one. */
  sessionId?: string,
  options: StdioOptions = {}
): Effect.Effect<void, never, Scope.Scope> =>
  Effect.gen(function* () {
    const session = sessionId ?? `mcp-${randomUUID()}`
    // Not the SDK's: a message over its 10 MiB limit made that one close, ending the server.
    const line = new LineStdioTransport({
      ...(options.stdin === undefined ? {} : { stdin: options.stdin }),
      ...(options.stdout === undefined ? {} : { stdout: options.stdout })
    })
    const stdin = options.stdin ?? process.stdin
    // The SDK's transport does not notice the end of stdin; the client going away ends the server.
    const onEnd = () => void line.close().catch(() => undefined)
    stdin.on("end", onEnd)
    yield* Effect.addFinalizer(() => Effect.sync(() => stdin.off("end", onEnd)))
    const { transport, first } = yield* Effect.promise(() => ReplayTransport.open(line))
    if (first === undefined) return
    const scope = yield* Effect.scope
    const legacy = Effect.promise(legacyServer).pipe(
      Effect.flatMap(({ makeToolServer }) => Scope.provide(makeToolServer(system, session), scope)),
      Effect.tap((server) => Effect.sync(() => onServer(server)))
    )
    if (isLegacyOpening(first)) {
      const server = yield* legacy
      yield* Effect.promise(() => server.connect(transport))
    } else {
      const sdk = yield* Effect.promise(() => import("@modelcontextprotocol/server/stdio"))
      const run = Effect.runPromiseWith(yield* Effect.context<never>())
      let pinned: ModernServer | undefined
      const toolsChanged = () => void pinned?.sendToolListChanged().catch(() => undefined)
      const modern = yield* makeModernFactory(system, session, options.modern ?? {}, toolsChanged)
      const handle = sdk.serveStdio(
        async ({ era }) => {
          if (era === "legacy") return (await run(legacy)) as never
          pinned = modern.factory()
          return pinned
        },
        { transport: transport as never, onerror: () => undefined }
      )
      yield* Effect.addFinalizer(() => Effect.promise(() => handle.close().catch(() => undefined)))
      // The 2025 branch's server announces changes itself; a 2026 one through subscriptions/listen.
      yield* Context.get(system, ToolRegistry).changes.pipe(
        Stream.runForEach(() => Effect.sync(toolsChanged)),
        Effect.forkScoped({ startImmediately: true })
      )
    }
    yield* Effect.promise(() => transport.ended)
  })

export interface HttpServing {
  readonly url: string
  readonly port: number
  /** Who may call: the token every request must carry as `Authorization: Bearer …`, or none. */
  readonly auth: HttpAuth
  /** The MCP server of an open session (the `question` tool's elicitation asks through it). */
  readonly serverFor: (sessionId: string) => Server | undefined
}

export interface HttpOptions {
  /** The IP address to listen on (default 127.0.0.1). A name is refused: what it means can change. */
  readonly host?: string
  /** Default: a random token, in `HttpServing.auth`. `none` is refused unless `host` is loopback. */
  readonly auth?: HttpAuth
  /** The most a request body may carry (default MAX_REQUEST_BYTES); past it, 413 unread. */
  readonly maxRequestBytes?: number
  /** The 2026 era's approvals: where the signing key lives, how long an answer may take. */
  readonly modern?: ModernOptions
}

const jsonRpcError = (
  res: NodeHttp.ServerResponse,
  status: number,
  code: number,
  message: string,
  headers: Record<string, string> = {}
) => {
  if (res.headersSent) return
  res.writeHead(status, { "content-type": "application/json", ...headers })
  res.end(JSON.stringify({ jsonrpc: "2.0", error: { code, message }, id: null }))
}

/** How an address is written in a URL or a Host header. */
const hostPart = (address: string) => (address.includes(":") ? `[${address}]` : address)

/** The Host header values that name this server: its address, or every interface's for a wildcard. */
const hostNames = (host: string, port: number): Set<string> => {
  const wildcard = host === "0.0.0.0" || host === "::"
  const addresses = wildcard
    ? Object.values(networkInterfaces()).flatMap((list) => (list ?? []).map((i) => i.address))
    : [host]
  const names = addresses.map(hostPart)
  if (wildcard || isLoopback(host)) names.push("localhost", "127.0.0.1", "[::1]")
  return new Set(names.map((n) => `${n}:${port}`))
}

/**
 * Serves streamable HTTP at http://HOST:PORT/mcp (PORT 0: any free port; HOST 127.0.0.1 unless
 * `options.host`) while the scope is open.
 */
export const serveHttp = (
  system: ServedSystem,
  port: number,
  options: HttpOptions = {}
): Effect.Effect<HttpServing, Error, Scope.Scope> =>
  Effect.gen(function* () {
    const host = options.host ?? "127.0.0.1"
    const auth: HttpAuth = options.auth ?? { kind: "token", token: randomToken() }
    const maxRequestBytes = options.maxRequestBytes ?? MAX_REQUEST_BYTES
    if (isIP(host) === 0) {
      return yield* Effect.fail(new Error(`${host} is not an IP address; listen on an address, not a name`))
    }
    if (auth.kind === "none" && !isLoopback(host)) {
      return yield* Effect.fail(
        new Error(
          `serving without a token is allowed on a loopback address only, and ${host} is not one: anyone who reaches it could run commands`
        )
      )
    }
    const { StreamableHTTPServerTransport } = yield* Effect.promise(httpTransport)
    const { makeToolServer } = yield* Effect.promise(legacyServer)
    const { isInitializeRequest } = yield* Effect.promise(legacyTypes)
    const gateModule = auth.kind === "oauth" ? yield* Effect.promise(oauthGate) : undefined
    const outer = yield* Effect.scope
    const run = Effect.runPromiseWith(yield* Effect.context<never>())
    const given = Context.getOption(system, Sessions)
    const owner: SessionsShape = Option.isSome(given)
      ? given.value
      : yield* Effect.acquireRelease(
          Effect.sync(() => makeSessions({ maxSessions: DEFAULT_MAX_SESSIONS })),
          (s) => s.close
        )
    // Ending the session (any way) closes its transport; the transport closing ends the session.
    // The 2026 era: requests that carry their protocol version in `_meta` and no session.
    // With a shared store, any replica continues any session (session-move.ts).
    const moving = yield* sessionMoving(system, auth, (id) => void run(owner.end(id)))
    const modern = yield* makeModernServing(system, maxRequestBytes, options.modern, moving?.modernSessionId)
    const sessions = owner.slot<{ readonly transport: MovableTransport; readonly server: Server }>("mcpHttp", (_, s) =>
      Effect.promise(() => s.transport.close().catch(() => undefined))
    )
    let allowedHosts = new Set<string>()
    let gate: ResourceGate | undefined

    const hostAllowed = (req: NodeHttp.IncomingMessage): boolean => {
      if (!allowedHosts.has(req.headers.host ?? "")) return false
      const origin = req.headers.origin
      if (origin === undefined) return true
      try {
        return allowedHosts.has(new URL(origin).host)
      } catch {
        return false
      }
    }

    /** A server for a session's transport; the transport closing ends the session here. */
    const connectServer = async (transport: StreamableHTTPServerTransport | Parameters<Server["connect"]>[0]) => {
      const scope = await run(Scope.fork(outer))
      transport.onclose = () => {
        const id = transport.sessionId
        void run(Effect.andThen(id === undefined ? Effect.void : owner.end(id), Scope.close(scope, Exit.void)))
      }
      const server = await run(Scope.provide(makeToolServer(system), scope))
      await server.connect(transport)
      return server
    }

    const openSession = async (req: NodeHttp.IncomingMessage, res: NodeHttp.ServerResponse, body: unknown) => {
      let server: Server | undefined
      const events = moving?.eventStore()
      const transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => {
          const id = randomUUID()
          events?.bind(id)
          return id
        },
        onsessioninitialized: async (id) => {
          if (server !== undefined) sessions.getOrCreate(id, () => ({ transport, server: server! }))
          await moving?.remember(id, body)
        },
        ...(moving === undefined || events === undefined
          ? {}
          : { eventStore: events, onsessionclosed: (id: string) => moving.forget(id) })
      })
      server = await connectServer(transport)
      await transport.handleRequest(req, res, body)
    }

    /** A session another replica initialized, continued here from the store (or undefined). */
    const movedSession = async (id: string) => {
      if (moving === undefined) return undefined
      const restored = await moving.restore(id, connectServer)
      return restored === undefined ? undefined : sessions.getOrCreate(id, () => restored)
    }

    const handle = async (req: NodeHttp.IncomingMessage, res: NodeHttp.ServerResponse) => {
      // Nothing is read before these checks: the body is read last, and only up to the cap.
      if (!hostAllowed(req)) {
        return jsonRpcError(res, 403, -32000, `Forbidden: Host ${req.headers.host ?? "(none)"} is not this server`)
      }
      if (auth.kind === "oauth") {
        // The gate exists once the port is known; nothing passes before it.
        if (gate === undefined) return jsonRpcError(res, 503, -32603, "Unavailable: starting; try again")
        if ((await gate.handle(req, res)) === "answered") return
      }
      const who = auth.kind === "oauth" ? "ok" : authorized(auth, req)
      if (who !== "ok") {
        return jsonRpcError(
          res,
          401,
          -32001,
          who === "missing"
            ? "Unauthorized: send the token `mcp --http` printed (token=…) as the header Authorization: Bearer <token>"
            : "Unauthorized: the bearer token is not this server's; use the one `mcp --http` printed (token=…) or gave with --token-file",
          {
            "www-authenticate":
              who === "missing"
                ? 'Bearer realm="freecode-tools"'
                : 'Bearer realm="freecode-tools", error="invalid_token", error_description="the token is not this server\'s"'
          }
        )
      }
      const url = new URL(req.url ?? "/", "http://localhost")
      if (url.pathname !== "/mcp") return jsonRpcError(res, 404, -32000, "Not found: the MCP endpoint is /mcp")
      const sessionId = req.headers["mcp-session-id"]
      let body: unknown
      if (req.method === "POST") {
        let text: string
        try {
          text = await readCappedBody(req, res, maxRequestBytes)
        } catch (e) {
          if (!(e instanceof TooLarge)) throw e
          jsonRpcError(
            res,
            413,
            -32600,
            `Request too large: a request may carry at most ${maxRequestBytes} bytes; send less in one call`
          )
          return discardRest(req, res, maxRequestBytes)
        }
        try {
          body = JSON.parse(text)
        } catch {
          return jsonRpcError(res, 400, -32700, "Parse error: the body is not JSON")
        }
        if (typeof sessionId !== "string") {
          const request = toWebRequest(req, text)
          if (!(await modern.isLegacy(request, body))) {
            return sendWebResponse(await modern.handler.fetch(request, { parsedBody: body }), res)
          }
        }
      }
      if (typeof sessionId === "string") {
        let session = sessions.get(sessionId)
        if (session === undefined && moving !== undefined) {
          try {
            session = await movedSession(sessionId)
          } catch (e) {
            return jsonRpcError(
              res,
              503,
              -32000,
              `Session ${sessionId} is kept in the shared state store, which could not be reached (${e instanceof Error ? e.message : String(e)}); retry once it is back`
            )
          }
        }
        if (session === undefined) return jsonRpcError(res, 404, -32001, "Session not found; initialize again")
        moving?.touch(sessionId)
        // In use, never idle, until this request (or the stream it opened) ends.
        res.once("close", owner.hold(sessionId))
        return session.transport.handleRequest(req, res, body)
      }
      if (req.method === "POST" && isInitializeRequest(body)) return openSession(req, res, body)
      return jsonRpcError(res, 400, -32000, "Bad Request: no valid session id; send initialize first")
    }

    const onRequest = (req: NodeHttp.IncomingMessage, res: NodeHttp.ServerResponse) => {
      handle(req, res).catch((e: unknown) =>
        jsonRpcError(res, 500, -32603, `Internal error: ${e instanceof Error ? e.message : String(e)}`)
      )
    }
    const http = nodeHttp().createServer(onRequest)
    // `Expect: 100-continue` is answered only once the checks passed (readCappedBody sends it):
    // a client told 401 or 413 first never sends the body.
    http.on("checkContinue", onRequest)
    const bound = yield* Effect.callback<number, Error>((resume) => {
      http.once("error", (e) => resume(Effect.fail(e)))
      http.listen(port, host, () => {
        const address = http.address()
        resume(Effect.succeed(typeof address === "object" && address !== null ? address.port : port))
      })
    })
    allowedHosts = hostNames(host, bound)
    // Listening is where an HTTP server's start-up ends (it answers nothing on stdout).
    startUpOver()
    if (gateModule !== undefined && auth.kind === "oauth") {
      gate = gateModule.makeResourceGate(auth, `http://${hostPart(host)}:${bound}/mcp`)
      // Behind a proxy the resource is named by its public address: requests for it are this server's.
      allowedHosts.add(new URL(gate.resource).host)
    }
    yield* Effect.addFinalizer(() =>
      Effect.promise(async () => {
        await Promise.all([...sessions.values()].map((s) => s.transport.close().catch(() => undefined)))
        http.closeAllConnections()
        await new Promise<void>((resolve) => http.close(() => resolve()))
      })
    )
    return {
      url: `http://${hostPart(host)}:${bound}/mcp`,
      port: bound,
      auth,
      serverFor: (sessionId: string) => sessions.get(sessionId)?.server
    }
  })
