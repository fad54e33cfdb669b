/**
 * Our tools to any MCP client. Built on the SDK's low-level `Server` so each tool's JSON Schema
 * goes out exactly as declared (McpServer wants Zod). Every call goes through the Dispatcher —
 * permissions, hooks, budgets, read de-duplication per MCP session — and comes back as the
 * model's copy of the output; a non-ok status is an `isError` result. No one can answer an
 * approval prompt here, so a call that asks is refused with the reason.
 */
import { randomUUID } from "node:crypto"
import { Server } from "@modelcontextprotocol/sdk/server/index.js"
import { Protocol } from "@modelcontextprotocol/sdk/shared/protocol.js"
import { CallToolRequestSchema, ListToolsRequestSchema, RequestSchema } from "@modelcontextprotocol/sdk/types.js"
import { AjvJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/ajv"
import { Context, Effect, Option, Stream } from "effect"
import { Dispatcher } from "../dispatch/dispatcher.ts"
import { ToolRegistry } from "../registry/registry.ts"
import { ToolSurface } from "../surface/surface.ts"
import {
  callParams,
  SERVER_INFO,
  type ServedSystem,
  toCallToolResult,
  toMcpTool,
  validatorOnFirstUse
} from "./tool-wire.ts"

/**
 * tools/call as the SDK reads it, but with `params` taken as any object: its fields are checked
 * by callParams, so a bad one gets -32602 and a sentence, not -32603 and a dump of the schema.
 */
const LooseCallToolRequestSchema = CallToolRequestSchema.extend({ params: RequestSchema.shape.params })

/**
 * One MCP `Server` over the system, for one client connection. Lives until the scope closes;
 * announces `tools/list_changed` whenever the registry changes. `sessionId` keys read
 * de-duplication; over HTTP each MCP session gets its own.
 */
export const makeToolServer = (system: ServedSystem, sessionId: string = `mcp-${randomUUID()}`) =>
  Effect.gen(function* () {
    const registry = Context.get(system, ToolRegistry)
    const dispatcher = Context.get(system, Dispatcher)
    // Calls run in the caller's context (its logger, on stderr) with the system's services
    // merged in, flat: a tool's services are then found where it looks, not layered on per call.
    const run = Effect.runPromiseWith(Context.merge(yield* Effect.context<never>(), system))

    const server = new Server(SERVER_INFO, {
      capabilities: { tools: { listChanged: true }, logging: {} },
      jsonSchemaValidator: validatorOnFirstUse(() => new AjvJsonSchemaValidator()),
      instructions:
        "Tools of a coding agent working in one project folder. Results are budgeted; a cut result names the `output` call that returns the rest."
    })

    // The dispatcher's tools: under a surface (or a profile), what it declares to this MCP
    // session; with the expand strategy, tools a session has found join its list.
    const surface = Context.getOption(system, ToolSurface)
    // (`all` defers too, past its auto-deferral threshold: tool_search then answers there as well.)
    const expands = Option.isSome(surface) && surface.value.strategy === "expand"
    const declaredTo = (session: string) =>
      Option.isSome(surface) ? surface.value.declared(session) : dispatcher.tools
    server.setRequestHandler(ListToolsRequestSchema, (_request, extra) =>
      run(Effect.map(declaredTo(extra.sessionId ?? sessionId), (tools) => ({ tools: tools.map(toMcpTool) })))
    )

    const callPrefix = randomUUID().slice(0, 8)
    let calls = 0
    // Registered through Protocol's setRequestHandler, which parses the request with the schema.
    // Server's override parses it a second time and then our result, with zod, on every call
    // (~15% of a 4 KB read's CPU): the result is built by toCallToolResult alone, which is
    // tested against CallToolResultSchema for every kind of content, and the client parses it
    // again anyway. (A call asked to run as a task never gets here: with no `tasks` capability
    // the SDK refuses it first.)
    Protocol.prototype.setRequestHandler.call(server, LooseCallToolRequestSchema, (request, extra) => {
      const { name, args } = callParams(request.params)
      // Unique across restarts of a persisted session too: request ids start again at 1.
      const callId = `mcp_${String(extra.requestId)}_${callPrefix}${(calls++).toString(36)}`
      const progressToken = request.params._meta?.progressToken
      // A streaming tool's live output reaches the client as log messages, and as progress
      // when the call asked for it. Sent in order, without waiting: a slow client never stalls the tool.
      const onOutput = (chunk: string, offset: number) => {
        server.sendLoggingMessage({ level: "info", logger: name, data: chunk }, extra.sessionId).catch(() => undefined)
        if (progressToken === undefined) return
        server
          .notification({
            method: "notifications/progress",
            params: { progressToken, progress: offset + chunk.length }
          })
          .catch(() => undefined)
      }
      const cancelled = Effect.callback<void>((resume) => {
        if (extra.signal.aborted) return resume(Effect.void)
        extra.signal.addEventListener("abort", () => resume(Effect.void), { once: true })
      })
      const dispatched = dispatcher.dispatch(
        { id: callId, name, args },
        { sessionId: extra.sessionId ?? sessionId, cancelled, onOutput }
      )
      return run(
        Effect.map(
          expands
            ? // A search that found tools changed this session's list: say so, so the client re-lists.
              Effect.tap(dispatched, (result) =>
                result.tool === "tool_search" && result.status === "ok"
                  ? Effect.promise(() => server.sendToolListChanged().catch(() => undefined))
                  : Effect.void
              )
            : dispatched,
          toCallToolResult
        )
      )
    })

    // list_changed on every registry change, for as long as this server lives.
    yield* registry.changes.pipe(
      Stream.runForEach(() => Effect.promise(() => server.sendToolListChanged().catch(() => undefined))),
      // Subscribed before this returns: a change right after connecting must not be missed.
      Effect.forkScoped({ startImmediately: true })
    )
    yield* Effect.addFinalizer(() => Effect.promise(() => server.close().catch(() => undefined)))
    return server
  })
