/**
 * One connection to one MCP server, from connect to close: connect in the server's era
 * (connect.ts), list the tools (tolerantly, page by page) or take a list still fresh by its cache
 * hint, register them under the session's scope, re-list when the list changes — told by
 * `tools/list_changed` (2025 era), by a `subscriptions/listen` stream (2026 era), or, when the
 * server can tell us neither, when its cache hint runs out — and return when the connection
 * closes. Closing the scope closes the client (which stops a stdio server) and unregisters every
 * tool the session registered.
 */
import type { McpSubscription } from "@modelcontextprotocol/client"
import { Data, Deferred, Duration, Effect, Exit, Queue, Result, Scope } from "effect"
import type { ToolRegistry } from "../registry/registry.ts"
import { isRecord } from "../schema/json-schema.ts"
import { stateDirConfig } from "../session/location.ts"
import { makeCaller } from "./call.ts"
import { loginDoor } from "./call-login.ts"
import { DEFAULT_CALL_TIMEOUT_MS, DEFAULT_STARTUP_TIMEOUT_MS, type McpServerConfig } from "./config.ts"
import { connectClient, loginRouteOf, mcpSdk } from "./connect.ts"
import { convertMcpTool, type McpServerRef } from "./convert.ts"
import { MAX_CALL_DURATION_MS, type McpLink, rawRequest, type StderrTail, withStderr } from "./link.ts"
import { type McpToolInfo, parseToolsPage, type SkippedTool } from "./list.ts"
import { assignToolNames, hashedToolName } from "./names.ts"
import { type CanVisit, Desk, type HostAsker, listenForQuestions } from "./questions.ts"

const MAX_PAGES = 100
/** A server's cache hint is believed up to a day (as the SDK's own cache does). */
const MAX_TTL_MS = 86_400_000
/** A list re-read because its hint ran out is re-read at most this often. */
const MIN_REFRESH_MS = 1000

export class McpConnectError extends Data.TaggedError("McpConnectError")<{ readonly message: string }> {}

/** One server's tool list as last read, kept across its reconnections. */
export interface ListCache {
  listed?: Listed
  /** Epoch ms until which the server said the list may be used without asking (0: never). */
  freshUntil: number
}

interface Listed {
  readonly tools: ReadonlyArray<McpToolInfo>
  readonly skipped: ReadonlyArray<SkippedTool>
  /** The server's `ttlMs`, when it sent one. */
  readonly ttlMs: number | undefined
}

/** What a session tells its supervisor. */
export interface SessionReport {
  readonly tools: (registered: ReadonlyArray<string>, skipped: ReadonlyArray<SkippedTool>) => Effect.Effect<void>
  readonly warn: (message: string) => Effect.Effect<void>
  /** Connected: the link lives until the session's scope closes. */
  readonly connected: (link: McpLink) => Effect.Effect<void, never, Scope.Scope>
  /** Whether a `subscriptions/listen` stream is open. */
  readonly listening: (open: boolean) => Effect.Effect<void>
  /** How many times the tool list was read from the server (a list taken from the cache is not). */
  readonly listed: () => void
}

export interface SessionOptions {
  readonly name: string
  readonly config: McpServerConfig
  readonly root: string
  readonly registry: ToolRegistry["Service"]
  readonly stderr: StderrTail
  readonly report: SessionReport
  readonly cache: ListCache
  /** Who shows the person a question the server asks during a call (undefined: nobody can be asked). */
  readonly ask?: HostAsker
  /** Whether a URL question can reach the call's person now (undefined: whenever `ask` is given). */
  readonly canVisit?: CanVisit
}

const describeError = (e: unknown): string => (e instanceof Error ? e.message : String(e))

const ttlOf = (page: unknown): number | undefined =>
  isRecord(page) && typeof page.ttlMs === "number" && Number.isFinite(page.ttlMs) && page.ttlMs >= 0
    ? Math.min(page.ttlMs, MAX_TTL_MS)
    : undefined

/**
 * Runs one connection. Fails with McpConnectError when connecting or the first listing fails
 * or times out; otherwise returns when the connection closes (the server exited or crashed).
 */
export const runSession = (options: SessionOptions): Effect.Effect<void, McpConnectError, Scope.Scope> =>
  Effect.gen(function* () {
    const sdk = yield* mcpSdk
    const { name, config, registry, report, stderr, cache } = options
    const sessionScope = yield* Effect.scope
    const callTimeout = config.timeout ?? DEFAULT_CALL_TIMEOUT_MS
    const startupTimeout = config.startupTimeout ?? DEFAULT_STARTUP_TIMEOUT_MS
    const stateDir = yield* Effect.orElseSucceed(stateDirConfig, () => undefined)
    const closed = yield* Deferred.make<void>()
    const relist = yield* Queue.unbounded<"changed" | "expired" | "relisten">()
    let isClosed = false
    let connected = false
    let lostBecause: string | undefined
    let client: McpLink["client"] | undefined
    const desk = new Desk()

    const startup = <A>(what: string, effect: Effect.Effect<A, McpConnectError>) =>
      effect.pipe(
        Effect.timeoutOrElse({
          duration: Duration.millis(startupTimeout),
          orElse: () =>
            Effect.fail(
              new McpConnectError({
                message: withStderr(
                  `${what} did not finish within ${Duration.format(Duration.millis(startupTimeout))}`,
                  stderr
                )
              })
            )
        })
      )

    // Closed when the scope closes, whether or not connecting finished.
    yield* Effect.addFinalizer(() => Effect.promise(() => client?.close().catch(() => undefined) ?? Promise.resolve()))
    const connection = yield* startup(
      "connecting",
      Effect.tryPromise({
        // The signal is aborted when the startup timeout interrupts this: a fallback attempt
        // started after that would leave its server running with nobody to close it.
        try: (signal) =>
          connectClient(sdk, {
            config,
            root: options.root,
            signal,
            timeoutMs: startupTimeout,
            ...(stateDir === undefined ? {} : { login: { stateDir, name: options.name } }),
            hooks: {
              stderr: (chunk) => stderr.add(chunk),
              // Over HTTP nothing closes when the server dies: the watched fetch says so, and
              // closing the client fails the pending calls as a closed stdio pipe would.
              dead: (reason) => {
                if (!connected || isClosed) return
                lostBecause = reason
                void client?.close().catch(() => undefined)
              }
            },
            prepare: (c) => {
              client = c
              // Set before connecting: server-everything sends list_changed right after initialize.
              c.setNotificationHandler("notifications/tools/list_changed", () => {
                Queue.offerUnsafe(relist, "changed")
              })
              // A 2025-era server's question during a call goes to that call's person.
              listenForQuestions(c, desk)
              c.onclose = () => {
                isClosed = true
                Deferred.doneUnsafe(closed, Exit.void)
              }
              // The stdio transport closes itself on a message over its line limit; only its
              // error says why, and the call's failure should too.
              c.onerror = (e) => {
                if (!isClosed && /ReadBuffer exceeded|max(imum)? ?buffer/i.test(e.message)) {
                  lostBecause =
                    "one of its messages was over the 10 MiB a stdio message may be, so the connection was closed; ask it for less at once"
                }
              }
            }
          }),
        catch: (e) => new McpConnectError({ message: withStderr(`cannot connect: ${describeError(e)}`, stderr) })
      })
    )
    connected = true
    const loginRoute = loginRouteOf(
      config,
      options.root,
      stateDir === undefined ? undefined : { stateDir, name: options.name }
    )
    const capabilities = connection.client.getServerCapabilities() ?? {}
    const link: McpLink = {
      server: name,
      sdk,
      client: connection.client,
      era: connection.era,
      resources: capabilities.resources !== undefined,
      prompts: capabilities.prompts !== undefined,
      timeoutMs: callTimeout,
      stderr,
      isClosed: () => isClosed,
      lostBecause: () => lostBecause,
      desk,
      ...(loginRoute === undefined ? {} : { login: loginDoor(loginRoute) }),
      person: {
        ...(options.ask === undefined ? {} : { host: options.ask }),
        ...(options.canVisit === undefined ? {} : { canVisit: options.canVisit })
      }
    }

    // 2026 era: changes come on a listen stream.
    const wantsListen = link.era === "2026-07-28" && capabilities.tools?.listChanged === true
    let subscription: McpSubscription | undefined
    const listen: Effect.Effect<void> = Effect.gen(function* () {
      const opened = yield* Effect.result(
        Effect.tryPromise(() => connection.client.listen({ toolsListChanged: true }, { timeout: startupTimeout }))
      )
      if (Result.isFailure(opened)) {
        subscription = undefined
        if (!isClosed) {
          yield* report.warn(
            `MCP server ${name}: subscriptions/listen failed (${describeError(opened.failure.cause)}); its tool list is read again when its cache hint runs out`
          )
        }
        return
      }
      const opening = opened.success
      subscription = opening
      yield* report.listening(true)
      // A stream the server ended while the connection lives is opened again (a second later).
      void opening.closed.then((how) => {
        if (how === "local" || isClosed || subscription !== opening) return
        subscription = undefined
        Effect.runFork(report.listening(false))
        setTimeout(() => Queue.offerUnsafe(relist, "relisten"), MIN_REFRESH_MS)
      })
    })
    yield* Effect.addFinalizer(() =>
      Effect.promise(() => subscription?.close().catch(() => undefined) ?? Promise.resolve())
    )

    const server: McpServerRef = {
      name,
      trusted: config.trusted ?? true,
      maxCallDuration: Duration.millis(MAX_CALL_DURATION_MS + 5_000)
    }
    const call = makeCaller(link, link.person)

    const listAll = Effect.gen(function* () {
      const tools: Array<McpToolInfo> = []
      const skipped: Array<SkippedTool> = []
      let cursor: string | undefined
      let ttlMs: number | undefined
      for (let page = 0; page < MAX_PAGES; page++) {
        const raw = yield* rawRequest(link, "tools/list", cursor === undefined ? {} : { cursor }, startupTimeout).pipe(
          Effect.mapError(
            (e) => new McpConnectError({ message: withStderr(`tools/list failed: ${describeError(e)}`, stderr) })
          )
        )
        if (page === 0) ttlMs = ttlOf(raw)
        const parsed = parseToolsPage(raw)
        tools.push(...parsed.tools)
        skipped.push(...parsed.skipped)
        cursor = parsed.nextCursor
        if (cursor === undefined) break
      }
      report.listed()
      const listed: Listed = { tools, skipped, ttlMs }
      cache.listed = listed
      cache.freshUntil = ttlMs === undefined || ttlMs === 0 ? 0 : Date.now() + ttlMs
      return listed
    })

    /** The cached list while its hint says it is fresh, else a new one. */
    const current = Effect.suspend(() =>
      cache.listed !== undefined && Date.now() < cache.freshUntil ? Effect.succeed(cache.listed) : listAll
    )

    let toolsScope: Scope.Closeable | undefined
    let expiry: Scope.Closeable | undefined

    /**
     * Swaps the registered set: the old tools go in the same step the new ones come, announced
     * as one change. When nothing will tell us of a change, a list with a hint is read again
     * when the hint runs out.
     */
    const swap = (listed: Listed) =>
      Effect.gen(function* () {
        const skipped = [...listed.skipped]
        const notes: Array<string> = []
        if (toolsScope !== undefined) yield* Scope.close(toolsScope, Exit.void)
        const scope = yield* Scope.fork(sessionScope)
        toolsScope = scope
        const byName = new Map(listed.tools.map((t) => [t.name, t]))
        const registered: Array<string> = []
        for (const [ours, theirs] of assignToolNames(name, [...byName.keys()])) {
          const info = byName.get(theirs)!
          const converted = convertMcpTool(server, info, call, ours)
          if (Result.isFailure(converted)) {
            skipped.push({ name: theirs, reason: converted.failure })
            continue
          }
          for (const note of converted.success.notes) notes.push(`${theirs}: ${note}`)
          let id = converted.success.tool.id
          const first = yield* Effect.result(Scope.provide(registry.registerScoped(converted.success.tool), scope))
          if (Result.isFailure(first)) {
            // Another server (or a built-in) has this name: fall back to the hashed one.
            id = hashedToolName(name, theirs)
            const second = yield* Effect.result(
              Scope.provide(registry.registerScoped({ ...converted.success.tool, id }), scope)
            )
            if (Result.isFailure(second)) {
              skipped.push({ name: theirs, reason: second.failure.message })
              continue
            }
          }
          registered.push(id)
        }
        for (const s of skipped) yield* report.warn(`MCP server ${name}: tool ${s.name} was skipped: ${s.reason}`)
        for (const note of notes) yield* report.warn(`MCP server ${name}: ${note}`)
        yield* report.tools(registered, skipped)
        if (expiry !== undefined) yield* Scope.close(expiry, Exit.void)
        expiry = undefined
        const left = cache.freshUntil - Date.now()
        const told =
          subscription !== undefined || (link.era === "2025-11-25" && capabilities.tools?.listChanged === true)
        if (cache.freshUntil > 0 && !told) {
          const timer = yield* Scope.fork(sessionScope)
          expiry = timer
          yield* Effect.sleep(Duration.millis(Math.max(left, MIN_REFRESH_MS))).pipe(
            Effect.andThen(Queue.offer(relist, "expired")),
            Effect.forkIn(timer)
          )
        }
      })

    yield* report.connected(link)
    // Listening before the first list: a change between the two is not missed.
    if (wantsListen) yield* listen
    yield* startup(
      "listing tools",
      Effect.flatMap(current, (listed) => registry.batch(swap(listed)))
    )

    while (true) {
      const next = yield* Effect.raceFirst(
        Deferred.await(closed).pipe(Effect.as("closed" as const)),
        Queue.take(relist)
      )
      if (next === "closed") return
      const all = [next, ...(yield* Queue.clear(relist))]
      if (all.includes("relisten") && !isClosed) yield* listen
      // A change makes the held list stale whatever its hint said.
      cache.freshUntil = 0
      const refreshed = yield* Effect.result(Effect.flatMap(listAll, (listed) => registry.batch(swap(listed))))
      if (Result.isFailure(refreshed) && !isClosed) {
        yield* report.warn(`MCP server ${name}: re-listing its tools failed: ${refreshed.failure.message}`)
      }
    }
  })
