/**
 * Our tools to a 2026-07-28 client, over HTTP (modern.ts) or stdio (stdio-eras.ts): a factory of
 * SDK 2.x low-level `Server`s over the system's Dispatcher. tools/list carries a cache hint;
 * tools/call goes through the Dispatcher as in the 2025 era, and a call that needs the person
 * is held and answered with `input_required` (held-calls.ts) instead of an elicitation request.
 */

import { homedir } from "node:os"
import * as NodePath from "node:path"
import type { Server as ModernServer, ServerContext } from "@modelcontextprotocol/server"
import { Context, Effect, Option } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import { Dispatcher } from "../dispatch/dispatcher.ts"
import { InputRound, type InputRoundShape } from "../prompt/input-round.ts"
import { isRecord } from "../schema/json-schema.ts"
import { stateDirConfig } from "../session/location.ts"
import { sqlNonceStore, storedStateKey } from "../state/request-states.ts"
import { ToolSurface } from "../surface/surface.ts"
import type { ToolResult } from "../tool/result.ts"
import { type CallIo, type HeldOutcome, makeHeldCalls, type RequestIo } from "./held-calls.ts"
import { makeHeldHandoff } from "./held-handoff.ts"
import {
  DEFAULT_STATE_TTL_MS,
  loadStateKey,
  makeRequestStates,
  memoryNonceStore,
  type RequestStates
} from "./request-state.ts"
import {
  callParams,
  SERVER_INFO,
  type ServedSystem,
  toCallToolResult,
  toMcpTool,
  validatorOnFirstUse
} from "./tool-wire.ts"

/** The SDK 2.x server side: loaded by the first 2026-era client or HTTP server, never before. */
export const loadModernServer = () => import("@modelcontextprotocol/server")

/** How long a 2026-era client may use a tool list without asking again (`ttlMs`). */
export const TOOL_LIST_TTL_MS = 60_000

const CLIENT_INFO = "io.modelcontextprotocol/clientInfo"
const CLIENT_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"

export interface ModernOptions {
  /** The folder of the key that signs `requestState` (default: the state folder, FREECODE_STATE_DIR); with a shared store, the store's key is used instead. */
  readonly stateDir?: string
  /** How long a person has to answer (default 10 minutes): a state lives that long, and so does a held call. */
  readonly stateTtlMs?: number
  /** The clock the states are signed and checked by (tests). */
  readonly now?: () => number
}

const INSTRUCTIONS =
  "Tools of a coding agent working in one project folder. Results are budgeted; a cut result names the `output` call that returns the rest."

/**
 * Who is calling, as far as the server can tell: the authenticated client (when the HTTP side
 * validated a token that names one) and the name and version the client gives in `_meta`.
 */
const clientOf = (ctx: ServerContext): string => {
  const envelope = (ctx.mcpReq.envelope ?? {}) as Record<string, unknown>
  const info = envelope[CLIENT_INFO]
  const name = isRecord(info) ? `${String(info.name)}@${String(info.version)}` : "unnamed"
  return `${ctx.http?.authInfo?.clientId ?? "local"}\u0000${name}`
}

const canElicit = (ctx: ServerContext): boolean => {
  const capabilities = ((ctx.mcpReq.envelope ?? {}) as Record<string, unknown>)[CLIENT_CAPABILITIES]
  return isRecord(capabilities) && capabilities.elicitation !== undefined
}

/** Whether the client declared URL-mode elicitation: it can send the person to a page. */
const canVisit = (ctx: ServerContext): boolean => {
  const capabilities = ((ctx.mcpReq.envelope ?? {}) as Record<string, unknown>)[CLIENT_CAPABILITIES]
  return isRecord(capabilities) && isRecord(capabilities.elicitation) && capabilities.elicitation.url !== undefined
}

/**
 * The signer, or why there is none: a key that cannot be used refuses every approval, saying why.
 * With a shared store, the store's key and used-state record, so a retry may reach any replica;
 * else the state dir's key file and this process's record.
 */
const signer = Effect.fnUntraced(function* (system: ServedSystem, options: ModernOptions) {
  const store = Context.getOption(system as unknown as Context.Context<SqlClient.SqlClient>, SqlClient.SqlClient)
  if (Option.isSome(store)) {
    const sql = store.value
    return yield* storedStateKey(sql).pipe(
      Effect.map((key): RequestStates => makeRequestStates(key, sqlNonceStore(sql), options.now)),
      Effect.result
    )
  }
  const dir =
    options.stateDir ??
    (yield* stateDirConfig.pipe(
      Effect.orElseSucceed(() => NodePath.join(homedir(), ".local", "state", "freecode-tools"))
    ))
  return yield* Effect.try({
    try: (): RequestStates => makeRequestStates(loadStateKey(dir), memoryNonceStore(options.now), options.now),
    catch: (e) => (e instanceof Error ? e.message : String(e))
  }).pipe(Effect.result)
})

/**
 * A factory of 2026-era servers over the system, all running calls under `sessionId`.
 * `toolsFound` is told when a tool_search found tools for the session (its list grew).
 */
export const makeModernFactory = Effect.fnUntraced(function* (
  system: ServedSystem,
  sessionId: string,
  options: ModernOptions,
  toolsFound: () => void
) {
  const sdk = yield* Effect.promise(loadModernServer)
  // The SDK's default validator, from the chunk the server side already loaded.
  const { AjvJsonSchemaValidator } = yield* Effect.promise(() => import("@modelcontextprotocol/server/validators/ajv"))
  const dispatcher = Context.get(system, Dispatcher)
  const run = Effect.runPromiseWith(Context.merge(yield* Effect.context<never>(), system))
  const surface = Context.getOption(system, ToolSurface)
  const declared = Option.isSome(surface) ? surface.value.declared(sessionId) : dispatcher.tools
  const expands = Option.isSome(surface) && surface.value.strategy === "expand"
  const states = yield* signer(system, options)
  const ttlMs = options.stateTtlMs ?? DEFAULT_STATE_TTL_MS
  // With a shared store, a retry for a call held on another replica is run again here or
  // handed to it (held-calls.ts, held-handoff.ts).
  const handoff =
    states._tag === "Success" ? yield* makeHeldHandoff(system as unknown as Context.Context<never>, ttlMs) : undefined
  const held =
    states._tag === "Success"
      ? makeHeldCalls<ToolResult>(
          states.success,
          ttlMs,
          handoff === undefined
            ? {}
            : { place: handoff.place, forward: handoff.forward, dropElsewhere: handoff.dropElsewhere }
        )
      : undefined
  if (held !== undefined) yield* Effect.addFinalizer(() => held.close)
  const callPrefix = randomPrefix()
  let calls = 0

  /** An outcome as the wire carries it (a refusal is an error, below). */
  const asWire = (outcome: HeldOutcome<ToolResult>): unknown => {
    if (outcome._tag === "Result") return toCallToolResult(outcome.result)
    if (outcome._tag === "Wire") return outcome.wire
    if (outcome._tag === "InputRequired") {
      return {
        resultType: "input_required",
        inputRequests: outcome.inputRequests,
        requestState: outcome.requestState
      }
    }
    return undefined
  }
  const wire = (outcome: HeldOutcome<ToolResult>) => {
    if (outcome._tag !== "Refused") return asWire(outcome)
    // The program was lost with its replica: not a bad state, a server that is gone.
    const lost = outcome.problem === "replica-lost" || outcome.problem === "replica-lost-after-answer"
    throw new sdk.ProtocolError(lost ? -32603 : -32602, outcome.message, {
      reason: lost ? "replica_lost" : "invalid_request_state",
      problem: outcome.problem
    })
  }
  if (held !== undefined && handoff !== undefined) yield* handoff.serve(held, asWire)

  const factory = (): ModernServer => {
    const server = new sdk.Server(SERVER_INFO, {
      capabilities: { tools: { listChanged: true }, logging: {} },
      jsonSchemaValidator: validatorOnFirstUse(() => new AjvJsonSchemaValidator()),
      instructions: INSTRUCTIONS
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
      const io: RequestIo = {
        onOutput: (chunk, offset) => {
          ctx.mcpReq.log("info", chunk, name).catch(() => undefined)
          if (progressToken === undefined) return
          ctx.mcpReq
            .notify({ method: "notifications/progress", params: { progressToken, progress: offset + chunk.length } })
            .catch(() => undefined)
        },
        canElicit: canElicit(ctx),
        canVisit: canVisit(ctx),
        signal: ctx.mcpReq.signal
      }
      const binding = { tool: name, args, client: clientOf(ctx) }
      const dispatched = (io: { onOutput: RequestIo["onOutput"]; cancelled: Effect.Effect<void> }) => {
        const result = dispatcher.dispatch(
          { id: callId, name, args },
          { sessionId, cancelled: io.cancelled, onOutput: io.onOutput }
        )
        return expands
          ? Effect.tap(result, (r) =>
              Effect.sync(() => {
                if (r.tool === "tool_search" && r.status === "ok") toolsFound()
              })
            )
          : result
      }
      const state = ctx.mcpReq.requestState()
      if (held === undefined) {
        // No signer: the call runs, and whatever would ask the person is refused saying why.
        const reason = `the key that signs approvals cannot be used (${states._tag === "Failure" ? states.failure : ""})`
        const cancelled = Effect.callback<void>((resume) => {
          if (io.signal.aborted) return resume(Effect.void)
          io.signal.addEventListener("abort", () => resume(Effect.void), { once: true })
        })
        return run(
          Effect.map(
            Effect.provideService(dispatched({ onOutput: io.onOutput, cancelled }), InputRound, {
              elicit: () => Effect.succeed({ _tag: "Unavailable", reason })
            }),
            toCallToolResult
          )
        ) as never
      }
      const runCall = (round: InputRoundShape, callIo: CallIo) =>
        Effect.provideService(dispatched(callIo), InputRound, round)
      const outcome =
        typeof state === "string"
          ? held.resume(binding, state, ctx.mcpReq.inputResponses, io, runCall)
          : held.start(binding, io, runCall)
      return run(Effect.map(outcome, wire)) as never
    })
    return server
  }
  return { factory, held }
})

const randomPrefix = () => Math.random().toString(36).slice(2, 10)
