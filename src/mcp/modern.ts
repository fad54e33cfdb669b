/**
 * The 2026-07-28 era of MCP over HTTP, beside the 2025 era (src/mcp/serve.ts, SDK 1.32): no
 * `initialize` and no session; every request carries its protocol version and client info in
 * `_meta`, `server/discover` answers what the handshake did, `subscriptions/listen` carries
 * list changes, and the standard `Mcp-Method`/`Mcp-Name` headers are checked against the body.
 * Built on the SDK 2.x server's `createMcpHandler` (strict: 2025 traffic never reaches it; the
 * caller routes with `isLegacyRequest`), with a fresh low-level `Server` per request over the
 * same Dispatcher. Every 2026-era request of one server process runs under one session of the
 * system (they all hold the same token: one principal), so a job one request starts is there
 * for the next.
 */
import { randomUUID } from "node:crypto"
import type * as NodeHttp from "node:http"
import { Readable } from "node:stream"
import type { McpHttpHandler } from "@modelcontextprotocol/server"
import { Context, Effect, Option, Stream } from "effect"
import { Dispatcher } from "../dispatch/dispatcher.ts"
import { ToolRegistry } from "../registry/registry.ts"
import { ToolSurface } from "../surface/surface.ts"
import { callParams, SERVER_INFO, type ServedSystem, toCallToolResult, toMcpTool } from "./server.ts"

/** The SDK 2.x server side: loaded with the first HTTP server, never by stdio serving. */
const loadServer = () => import("@modelcontextprotocol/server")

/** How long a 2026-era client may use a tool list without asking again (`ttlMs`). */
export const TOOL_LIST_TTL_MS = 60_000

export interface ModernServing {
  /** Whether a request (its body already read and parsed) belongs to the 2025 era. */
  readonly isLegacy: (request: Request, body: unknown) => Promise<boolean>
  readonly handler: McpHttpHandler
}

/** A Node request, with the body already read, as a web `Request` for the SDK 2.x handler. */
export const toWebRequest = (req: NodeHttp.IncomingMessage, text: string | undefined): Request => {
  const headers = new Headers()
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined) continue
    for (const v of Array.isArray(value) ? value : [value]) headers.append(name, v)
  }
  return new Request(`http://${req.headers.host ?? "localhost"}${req.url ?? "/"}`, {
    method: req.method ?? "GET",
    headers,
    ...(text === undefined ? {} : { body: text })
  })
}

/** Writes a web `Response` to a Node response, streaming its body; the client leaving cancels it. */
export const sendWebResponse = async (response: Response, res: NodeHttp.ServerResponse): Promise<void> => {
  const headers: Record<string, string> = {}
  response.headers.forEach((value, name) => {
    headers[name] = value
  })
  res.writeHead(response.status, headers)
  if (response.body === null) return void res.end()
  const body = Readable.fromWeb(response.body as import("node:stream/web").ReadableStream<Uint8Array>)
  res.once("close", () => body.destroy())
  body.on("error", () => res.destroy())
  body.pipe(res)
}

/**
 * The 2026-era handler over the system, while the scope is open: tools/list and tools/call go
 * through the Dispatcher as in the 2025 era; a registry change is published to every open
 * `subscriptions/listen` stream.
 */
export const makeModernServing = (
  system: ServedSystem,
  maxRequestBytes: number,
  /** The session every request runs under; with a shared store, the same on every replica. */
  sessionId = `mcp-2026-${randomUUID()}`
) =>
  Effect.gen(function* () {
    const sdk = yield* Effect.promise(loadServer)
    const registry = Context.get(system, ToolRegistry)
    const dispatcher = Context.get(system, Dispatcher)
    const run = Effect.runPromiseWith(Context.merge(yield* Effect.context<never>(), system))
    const surface = Context.getOption(system, ToolSurface)
    const declared = Option.isSome(surface) ? surface.value.declared(sessionId) : dispatcher.tools
    const callPrefix = randomUUID().slice(0, 8)
    let calls = 0

    const factory = () => {
      const server = new sdk.Server(SERVER_INFO, {
        capabilities: { tools: { listChanged: true }, logging: {} },
        instructions:
          "Tools of a coding agent working in one project folder. Results are budgeted; a cut result names the `output` call that returns the rest."
      })
      // Cacheable for a minute, per principal: a change within it reaches every listening client
      // as list_changed, which drops the cached list.
      server.setRequestHandler("tools/list", () =>
        run(
          Effect.map(declared, (tools) => ({
            tools: tools.map(toMcpTool) as never,
            ttlMs: TOOL_LIST_TTL_MS,
            cacheScope: "private" as const
          }))
        )
      )
      server.setRequestHandler("tools/call", (request, ctx) => {
        const { name, args } = callParams(request.params)
        const callId = `mcp_${String(ctx.mcpReq.id)}_${callPrefix}${(calls++).toString(36)}`
        const progressToken = request.params._meta?.progressToken
        const onOutput = (chunk: string, offset: number) => {
          ctx.mcpReq.log("info", chunk, name).catch(() => undefined)
          if (progressToken === undefined) return
          ctx.mcpReq
            .notify({ method: "notifications/progress", params: { progressToken, progress: offset + chunk.length } })
            .catch(() => undefined)
        }
        const signal = ctx.mcpReq.signal
        const cancelled = Effect.callback<void>((resume) => {
          if (signal.aborted) return resume(Effect.void)
          signal.addEventListener("abort", () => resume(Effect.void), { once: true })
        })
        return run(
          Effect.map(
            dispatcher.dispatch({ id: callId, name, args }, { sessionId, cancelled, onOutput }),
            (result) => toCallToolResult(result) as never
          )
        )
      })
      return server
    }

    const handler = yield* Effect.acquireRelease(
      Effect.sync(() => sdk.createMcpHandler(factory, { legacy: "reject", maxRequestBodySize: maxRequestBytes })),
      (h) => Effect.promise(() => h.close().catch(() => undefined))
    )
    yield* registry.changes.pipe(
      Stream.runForEach(() => Effect.sync(() => handler.notify.toolsChanged())),
      Effect.forkScoped({ startImmediately: true })
    )
    const serving: ModernServing = {
      handler,
      isLegacy: (request, body) => sdk.isLegacyRequest(request, body, { maxRequestBodySize: maxRequestBytes })
    }
    return serving
  })
