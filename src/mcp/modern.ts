/**
 * The 2026-07-28 era of MCP over HTTP, beside the 2025 era (src/mcp/transports.ts, SDK 1.32): no
 * `initialize` and no session; every request carries its protocol version and client info in
 * `_meta`, `server/discover` answers what the handshake did, `subscriptions/listen` carries
 * list changes, and the standard `Mcp-Method`/`Mcp-Name` headers are checked against the body.
 * Built on the SDK 2.x server's `createMcpHandler` (strict: 2025 traffic never reaches it; the
 * caller routes with `isLegacyRequest`), with a fresh low-level `Server` per request over the
 * same Dispatcher (modern-server.ts, shared with stdio). Every 2026-era request of one server
 * process runs under one session of the system (they all hold the same token: one principal),
 * so a job one request starts is there for the next.
 */
import { randomUUID } from "node:crypto"
import type * as NodeHttp from "node:http"
import { Readable } from "node:stream"
import type { McpHttpHandler } from "@modelcontextprotocol/server"
import { Context, Effect, Stream } from "effect"
import { ToolRegistry } from "../registry/registry.ts"
import { loadModernServer, type ModernOptions, makeModernFactory } from "./modern-server.ts"
import type { ServedSystem } from "./tool-wire.ts"

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
 * The 2026-era HTTP handler over the system, while the scope is open: a fresh low-level `Server`
 * per request (makeModernFactory); a registry change is published to every open
 * `subscriptions/listen` stream.
 */
export const makeModernServing = (
  system: ServedSystem,
  maxRequestBytes: number,
  options: ModernOptions = {},
  /** The session every request runs under; with a shared store, the same on every replica. */
  sessionId = `mcp-2026-${randomUUID()}`
) =>
  Effect.gen(function* () {
    const sdk = yield* Effect.promise(loadModernServer)
    const registry = Context.get(system, ToolRegistry)
    let notify = () => {}
    const modern = yield* makeModernFactory(system, sessionId, options, () => notify())
    const handler = yield* Effect.acquireRelease(
      Effect.sync(() =>
        sdk.createMcpHandler(modern.factory, { legacy: "reject", maxRequestBodySize: maxRequestBytes })
      ),
      (h) => Effect.promise(() => h.close().catch(() => undefined))
    )
    notify = () => handler.notify.toolsChanged()
    yield* registry.changes.pipe(
      Stream.runForEach(() => Effect.sync(notify)),
      Effect.forkScoped({ startImmediately: true })
    )
    const serving: ModernServing = {
      handler,
      isLegacy: (request, body) => sdk.isLegacyRequest(request, body, { maxRequestBodySize: maxRequestBytes })
    }
    return serving
  })
