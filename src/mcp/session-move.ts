/**
 * MCP sessions that any replica serves, when the system has a shared store (docs/scaling.md).
 *
 * 2025 era: the SDK's transport answers only sessions it initialized itself. So the initialize
 * a client sent is kept in the store (`fc_sessions`: protocol version, client info and
 * capabilities); a replica that gets a request for a session it does not hold, but the store
 * does, builds a transport and server for it and replays that initialize (and `initialized`)
 * through the SDK's own web-standard transport, with a session id generator that gives the
 * stored id. The server then knows the client as the first replica did, and the session's calls
 * run under the same id, so its outputs, grants, todos and read records are the ones the store
 * holds. Every message the session's streams carry is kept in the store too (`fc_mcp_events`),
 * so a stream resumes with `Last-Event-ID` on any replica, from the events stored so far.
 *
 * 2026 era: requests carry no session; every request of one principal (one token) runs under
 * one session id derived from the token, the same on every replica.
 */
import { createHash } from "node:crypto"
import type * as NodeHttp from "node:http"
import type { Server } from "@modelcontextprotocol/sdk/server/index.js"
import type {
  EventStore,
  WebStandardStreamableHTTPServerTransport
} from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js"
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js"
import { type Context, Effect, Queue, Schedule, type Scope } from "effect"
import { lazyImport } from "../load/lazy.ts"
import { sharedStoreOf } from "../state/host-lease.ts"
import type { HttpAuth } from "./http-guard.ts"
import { sendWebResponse, toWebRequest } from "./modern.ts"

const webTransport = lazyImport(() => import("@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js"))

/** The channel a session's end is announced on (PostgreSQL); the payload is the session id. */
const SESSIONS_CHANNEL = "freecode_mcp_sessions"

interface PgListen {
  readonly listen: (
    channel: string
  ) => Effect.Effect<Queue.Dequeue<{ readonly payload: string }, unknown>, unknown, Scope.Scope>
  readonly notify: (channel: string, payload: string) => Effect.Effect<void, unknown>
}

/** A stored session unused this long is not continued (404: initialize again), and is deleted. */
export const STORED_SESSION_TTL_MS = 30 * 60_000
/** How often a replica marks a session it serves as in use (one write per session per interval). */
const TOUCH_EVERY_MS = 60_000
/** How many events a session keeps for resumption; older ones go as new ones come. */
const EVENTS_KEPT = 1000

/** What a session's transport needs from the serving code, whichever replica built it. */
export interface MovableTransport {
  readonly handleRequest: (req: NodeHttp.IncomingMessage, res: NodeHttp.ServerResponse, body?: unknown) => Promise<void>
  readonly close: () => Promise<void>
}

export interface SessionMoving {
  /** The session every 2026-era request of this principal runs under, on every replica. */
  readonly modernSessionId: string
  /** An event store for a new session's transport; `bind` tells it the session id once known. */
  readonly eventStore: () => EventStore & { bind: (sessionId: string) => void }
  /** Keeps a session's initialize request (its params), so another replica can continue it. */
  readonly remember: (sessionId: string, initialize: unknown) => Promise<void>
  /**
   * Rebuilds a session this replica does not hold from the store: undefined when the store has
   * none (or it expired). `connect` connects a new server to the transport (the serving code's
   * own, so the session is served the same way).
   */
  readonly restore: (
    sessionId: string,
    connect: (transport: WebStandardStreamableHTTPServerTransport) => Promise<Server>
  ) => Promise<{ readonly transport: MovableTransport; readonly server: Server } | undefined>
  /** Marks the session as in use (at most one write a minute). */
  readonly touch: (sessionId: string) => void
  /** The client ended the session (DELETE): no replica continues it. */
  readonly forget: (sessionId: string) => Promise<void>
}

/**
 * The 2026-era session id of the server's principal, the same on every replica: a hash of its
 * token (so it names no secret), or of the issuer and audience under OAuth.
 */
export const modernSessionIdFor = (auth: HttpAuth): string => {
  if (auth.kind === "none") return "mcp-2026-anyone"
  const key = auth.kind === "token" ? auth.token : `${auth.issuer}\u0000${auth.audience ?? ""}`
  return `mcp-2026-${createHash("sha256").update("freecode-tools 2026 session\u0000").update(key).digest("hex").slice(0, 32)}`
}

const initializeParams = (body: unknown): Record<string, unknown> | undefined => {
  const message = Array.isArray(body) ? body.find((m) => m?.method === "initialize") : body
  const params = (message as { params?: unknown } | undefined)?.params
  return typeof params === "object" && params !== null ? (params as Record<string, unknown>) : undefined
}

/** A web request the transport takes as the client's own (JSON and SSE accepted). */
const syntheticPost = (sessionId: string | undefined, version: string | undefined, message: unknown) =>
  new Request("http://replica.invalid/mcp", {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      ...(sessionId === undefined ? {} : { "mcp-session-id": sessionId }),
      ...(version === undefined ? {} : { "mcp-protocol-version": version })
    },
    body: JSON.stringify(message)
  })

/**
 * The moving side for a system with a shared store, or undefined without one (then nothing
 * changes: sessions stay with the replica that initialized them).
 */
export const sessionMoving = Effect.fnUntraced(function* (
  system: Context.Context<never>,
  auth: HttpAuth,
  endHere: (sessionId: string) => void
): Effect.fn.Return<SessionMoving | undefined, never, Scope.Scope> {
  const shared = sharedStoreOf(system)
  if (shared === undefined) return undefined
  const { sql, lease } = shared
  const workspace = lease.workspace
  const run = Effect.runPromiseWith(yield* Effect.context<never>())
  const now = () => Date.now()

  const store = (): EventStore & { bind: (sessionId: string) => void } => {
    let session: string | undefined
    let stored = 0
    const streamOf = (eventId: string) =>
      /^\d{1,18}$/.test(eventId) && session !== undefined
        ? Effect.map(
            sql<{
              stream_id: string
            }>`SELECT stream_id FROM fc_mcp_events WHERE id = ${Number(eventId)} AND session_id = ${session}`,
            (rows) => rows[0]?.stream_id
          )
        : Effect.succeed(undefined)
    return {
      bind: (id) => {
        session = id
      },
      storeEvent: (streamId, message) =>
        run(
          Effect.gen(function* () {
            if (session === undefined) return yield* Effect.die(new Error("an event before the session had an id"))
            const rows = yield* sql<{
              id: number | string
            }>`INSERT INTO fc_mcp_events (session_id, stream_id, message, created_at)
                SELECT ${session}, ${streamId}, ${JSON.stringify(message)}, ${now()} ${lease.held} RETURNING id`
            yield* lease.expectHeld(rows)
            if (++stored % 100 === 0) {
              yield* sql`DELETE FROM fc_mcp_events WHERE session_id = ${session} AND id <= ${Number(rows[0]!.id) - EVENTS_KEPT}`
            }
            return String(rows[0]!.id)
          })
        ),
      getStreamIdForEventId: (eventId) => run(streamOf(eventId)),
      replayEventsAfter: (lastEventId, { send }) =>
        run(
          Effect.gen(function* () {
            const streamId = yield* streamOf(lastEventId)
            if (streamId === undefined) return ""
            const rows = yield* sql<{ id: number | string; message: string }>`SELECT id, message FROM fc_mcp_events
                WHERE session_id = ${session!} AND stream_id = ${streamId} AND id > ${Number(lastEventId)} ORDER BY id`
            for (const row of rows) {
              const message = JSON.parse(row.message) as JSONRPCMessage
              // A priming event (`{}`) only carried its id; the client has one.
              if (!("jsonrpc" in message)) continue
              yield* Effect.promise(() => send(String(row.id), message))
            }
            return streamId
          })
        )
    }
  }

  // Sessions the store holds that this replica serves, and when it last said they are in use.
  const touched = new Map<string, number>()
  const touch = (sessionId: string) => {
    const last = touched.get(sessionId)
    if (last === undefined || now() - last < TOUCH_EVERY_MS) return
    touched.set(sessionId, now())
    void run(
      sql<{ ok: number }>`UPDATE fc_sessions SET seen_at = ${now()}
          WHERE session_id = ${sessionId} AND workspace = ${workspace} RETURNING 1 AS ok`.pipe(
        // Gone from the store: its client ended it through another replica.
        Effect.flatMap((rows) => (rows.length === 0 ? Effect.sync(() => ended(sessionId)) : Effect.void)),
        Effect.ignore
      )
    )
  }
  const ended = (sessionId: string) => {
    if (!touched.delete(sessionId)) return
    endHere(sessionId)
  }

  // On PostgreSQL a session ended on one replica is announced to the others, which end their
  // copies at once; elsewhere (one machine's node:sqlite) the next minute's touch finds it gone.
  const pg = "listen" in sql && "notify" in sql ? (sql as unknown as PgListen) : undefined
  if (pg !== undefined) {
    const listenOnce = Effect.scoped(
      Effect.gen(function* () {
        const queue = yield* pg.listen(SESSIONS_CHANNEL)
        while (true) ended((yield* Queue.take(queue)).payload)
      })
    ).pipe(Effect.ignoreCause)
    yield* Effect.forkScoped(Effect.forever(Effect.andThen(listenOnce, Effect.sleep(200))))
  }

  const forgetting = (sessionId: string) =>
    Effect.andThen(
      sql`DELETE FROM fc_sessions WHERE session_id = ${sessionId}`,
      sql`DELETE FROM fc_mcp_events WHERE session_id = ${sessionId}`
    ).pipe(Effect.andThen(pg === undefined ? Effect.void : Effect.ignore(pg.notify(SESSIONS_CHANNEL, sessionId))))

  // Sessions nobody used for the TTL go, with their events.
  yield* Effect.forkScoped(
    Effect.repeat(
      Effect.ignore(
        Effect.gen(function* () {
          const old = yield* sql<{ session_id: string }>`SELECT session_id FROM fc_sessions
              WHERE workspace = ${workspace} AND seen_at < ${now() - STORED_SESSION_TTL_MS}`
          for (const { session_id } of old) yield* forgetting(session_id)
        })
      ),
      Schedule.spaced(STORED_SESSION_TTL_MS / 3)
    )
  )

  const restoring = new Map<string, Promise<{ transport: MovableTransport; server: Server } | undefined>>()

  const restoreOnce = async (
    sessionId: string,
    connect: (transport: WebStandardStreamableHTTPServerTransport) => Promise<Server>
  ) => {
    const rows = await run(
      sql<{
        era: string
        client_info: string
        capabilities: string
        seen_at: number | string
      }>`SELECT era, client_info, capabilities, seen_at
          FROM fc_sessions WHERE session_id = ${sessionId} AND workspace = ${workspace}`
    )
    const row = rows[0]
    if (row === undefined) return undefined
    if (Number(row.seen_at) < now() - STORED_SESSION_TTL_MS) {
      await run(Effect.ignore(forgetting(sessionId)))
      return undefined
    }
    const { WebStandardStreamableHTTPServerTransport } = await webTransport()
    const events = store()
    events.bind(sessionId)
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: () => sessionId,
      eventStore: events
    })
    const server = await connect(transport)
    const initialize = {
      jsonrpc: "2.0",
      id: "replica-restore",
      method: "initialize",
      params: {
        protocolVersion: row.era,
        clientInfo: JSON.parse(row.client_info) as unknown,
        capabilities: JSON.parse(row.capabilities) as unknown
      }
    }
    const answer = await transport.handleRequest(syntheticPost(undefined, undefined, initialize))
    await answer.text()
    if (!answer.ok || transport.sessionId !== sessionId) {
      await transport.close().catch(() => undefined)
      return undefined
    }
    const ready = await transport.handleRequest(
      syntheticPost(sessionId, row.era, { jsonrpc: "2.0", method: "notifications/initialized" })
    )
    await ready.text()
    touched.set(sessionId, 0)
    touch(sessionId)
    const movable: MovableTransport = {
      handleRequest: async (req, res, body) => {
        const request = toWebRequest(req, body === undefined ? undefined : JSON.stringify(body))
        await sendWebResponse(await transport.handleRequest(request, { parsedBody: body }), res)
      },
      close: () => transport.close()
    }
    return { transport: movable, server }
  }

  const moving: SessionMoving = {
    modernSessionId: modernSessionIdFor(auth),
    eventStore: store,
    remember: (sessionId, initialize) => {
      const params = initializeParams(initialize)
      if (params === undefined) return Promise.resolve()
      return run(
        sql`INSERT INTO fc_sessions (session_id, workspace, era, client_info, capabilities, created_at, seen_at)
            SELECT ${sessionId}, ${workspace}, ${String(params.protocolVersion ?? "")}, ${JSON.stringify(params.clientInfo ?? {})},
              ${JSON.stringify(params.capabilities ?? {})}, ${now()}, ${now()} ${lease.held} RETURNING 1 AS ok`.pipe(
          Effect.flatMap(lease.expectHeld),
          Effect.andThen(Effect.sync(() => void touched.set(sessionId, now()))),
          Effect.catchCause((cause) =>
            Effect.logWarning(
              `MCP session ${sessionId} could not be shared (${String(cause).split("\n")[0]}): only this replica can continue it`
            )
          )
        )
      )
    },
    restore: (sessionId, connect) => {
      const pending = restoring.get(sessionId)
      if (pending !== undefined) return pending
      const started = restoreOnce(sessionId, connect).finally(() => restoring.delete(sessionId))
      restoring.set(sessionId, started)
      return started
    },
    touch,
    forget: (sessionId) => {
      touched.delete(sessionId)
      return run(Effect.ignore(forgetting(sessionId)))
    }
  }
  return moving
})
