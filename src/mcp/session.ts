/**
 * One connection to one MCP server, from connect to close: start the transport, list the tools
 * (tolerantly, page by page), register them under the session's scope, re-list on
 * `tools/list_changed`, and return when the connection closes. Closing the scope closes the
 * client (which stops a stdio server) and unregisters every tool the session registered.
 */

import * as NodePath from "node:path"
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js"
import { Data, Deferred, Duration, Effect, Exit, Queue, Result, Scope } from "effect"
import type { ToolRegistry } from "../registry/registry.ts"
import { stateDirConfig } from "../session/location.ts"
import { tailOf } from "../text/cut.ts"
import { fail } from "../tool/errors.ts"
import type { ToolOutput } from "../tool/tool.ts"
import { backgroundProvider } from "./auth/client-provider.ts"
import {
  DEFAULT_CALL_TIMEOUT_MS,
  DEFAULT_STARTUP_TIMEOUT_MS,
  expandEnv,
  isStdio,
  type McpServerConfig
} from "./config.ts"
import { convertMcpTool, type McpCaller, type McpServerRef } from "./convert.ts"
import { watchedFetch } from "./http-watch.ts"
import { type McpToolInfo, parseToolsPage, type SkippedTool } from "./list.ts"
import { assignToolNames, hashedToolName } from "./names.ts"
import { flattenResult, resultProblem } from "./result.ts"

/**
 * The MCP SDK (and zod under it, ~20 MB resident): imported on the first connection, so a
 * process with no MCP server configured never loads it.
 */
const loadSdk = async () => {
  const [client, stdio, http, types] = await Promise.all([
    import("@modelcontextprotocol/sdk/client/index.js"),
    import("@modelcontextprotocol/sdk/client/stdio.js"),
    import("@modelcontextprotocol/sdk/client/streamableHttp.js"),
    import("@modelcontextprotocol/sdk/types.js")
  ])
  return {
    Client: client.Client,
    getDefaultEnvironment: stdio.getDefaultEnvironment,
    StdioClientTransport: stdio.StdioClientTransport,
    StreamableHTTPClientTransport: http.StreamableHTTPClientTransport,
    ErrorCode: types.ErrorCode,
    McpError: types.McpError,
    ResultSchema: types.ResultSchema,
    ToolListChangedNotificationSchema: types.ToolListChangedNotificationSchema
  }
}
type Sdk = Awaited<ReturnType<typeof loadSdk>>
let sdkPromise: Promise<Sdk> | undefined
/** The SDK, loaded once per process. */
const mcpSdk: Effect.Effect<Sdk> = Effect.promise(() => {
  sdkPromise ??= loadSdk()
  return sdkPromise
})

export const CLIENT_INFO = { name: "freecode-tools", version: "0.1.0" }

/** One call may keep going (with progress) at most this long. */
export const MAX_CALL_DURATION_MS = 30 * 60_000
const MAX_PAGES = 100

export class McpConnectError extends Data.TaggedError("McpConnectError")<{ readonly message: string }> {}

/** The last few KB a server wrote to stderr: what a failure report shows. */
export class StderrTail {
  private text = ""
  private readonly limit: number
  constructor(limit = 4000) {
    this.limit = limit
  }
  add(chunk: string): void {
    this.text = tailOf(this.text + chunk, this.limit)
  }
  get value(): string {
    return this.text.trim()
  }
}

/** What a session tells its supervisor. */
export interface SessionReport {
  readonly tools: (registered: ReadonlyArray<string>, skipped: ReadonlyArray<SkippedTool>) => Effect.Effect<void>
  readonly warn: (message: string) => Effect.Effect<void>
}

export interface SessionOptions {
  readonly name: string
  readonly config: McpServerConfig
  readonly root: string
  readonly registry: ToolRegistry["Service"]
  readonly stderr: StderrTail
  readonly report: SessionReport
}

const withStderr = (message: string, stderr: StderrTail): string =>
  stderr.value === "" ? message : `${message}\nstderr:\n${stderr.value}`

const describeError = (e: unknown): string => (e instanceof Error ? e.message : String(e))

const makeTransport = (
  sdk: Sdk,
  options: SessionOptions,
  onDead: (reason: string) => void,
  stateDir: string | undefined
): Transport => {
  const env = process.env
  const config = options.config
  if (isStdio(config)) {
    const transport = new sdk.StdioClientTransport({
      command: expandEnv(config.command, env),
      args: (config.args ?? []).map((a) => expandEnv(a, env)),
      // The SDK passes on only HOME, PATH, USER and a few more; a server's own variables must be named.
      env: {
        ...sdk.getDefaultEnvironment(),
        ...Object.fromEntries(Object.entries(config.env ?? {}).map(([k, v]) => [k, expandEnv(v, env)]))
      },
      cwd: NodePath.resolve(options.root, expandEnv(config.cwd ?? ".", env)),
      stderr: "pipe"
    })
    transport.stderr?.on("data", (chunk: Buffer) => options.stderr.add(chunk.toString()))
    return transport
  }
  const url = expandEnv(config.url, env)
  const headers = Object.fromEntries(Object.entries(config.headers ?? {}).map(([k, v]) => [k, expandEnv(v, env)]))
  return new sdk.StreamableHTTPClientTransport(new URL(url), {
    fetch: watchedFetch(onDead),
    requestInit: { headers },
    // A saved OAuth login (mcp-auth), unless the config sends its own Authorization header.
    ...(stateDir === undefined || Object.keys(headers).some((k) => k.toLowerCase() === "authorization")
      ? {}
      : { authProvider: backgroundProvider(stateDir, url, options.name, config.oauth) })
  })
}

/**
 * Runs one connection. Fails with McpConnectError when connecting or the first listing fails
 * or times out; otherwise returns when the connection closes (the server exited or crashed).
 */
export const runSession = (options: SessionOptions): Effect.Effect<void, McpConnectError, Scope.Scope> =>
  Effect.gen(function* () {
    const sdk = yield* mcpSdk
    const { name, config, registry, report, stderr } = options
    const { Client, ErrorCode, McpError, ResultSchema, ToolListChangedNotificationSchema } = sdk
    const sessionScope = yield* Effect.scope
    const callTimeout = config.timeout ?? DEFAULT_CALL_TIMEOUT_MS
    const startupTimeout = config.startupTimeout ?? DEFAULT_STARTUP_TIMEOUT_MS
    const closed = yield* Deferred.make<void>()
    const relist = yield* Queue.unbounded<void>()
    let isClosed = false

    const client = new Client(CLIENT_INFO, { capabilities: {} })
    // Set before connecting: server-everything sends list_changed right after initialize.
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      Queue.offerUnsafe(relist, undefined)
    })
    client.onclose = () => {
      isClosed = true
      Deferred.doneUnsafe(closed, Exit.void)
    }
    // Over HTTP nothing closes when the server dies: the watched fetch says so, and closing the
    // client fails the pending calls as a closed stdio pipe would. (Before connecting, the
    // connect itself fails with the reason.)
    let connected = false
    let lostBecause: string | undefined
    const stateDir = yield* Effect.orElseSucceed(stateDirConfig, () => undefined)
    const transport = makeTransport(
      sdk,
      options,
      (reason) => {
        if (!connected || isClosed) return
        lostBecause = reason
        void client.close().catch(() => undefined)
      },
      stateDir
    )
    // The SDK's stdio transport closes itself on a message over its 10 MiB line limit; only its
    // error says why, and the call's failure should too.
    client.onerror = (e) => {
      if (!isClosed && /ReadBuffer exceeded/.test(e.message)) {
        lostBecause =
          "one of its messages was over the 10 MiB a stdio message may be, so the connection was closed; ask it for less at once"
      }
    }
    yield* Effect.addFinalizer(() => Effect.promise(() => client.close().catch(() => undefined)))

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

    yield* startup(
      "connecting",
      Effect.tryPromise({
        try: () => client.connect(transport),
        catch: (e) => new McpConnectError({ message: withStderr(`cannot connect: ${describeError(e)}`, stderr) })
      })
    )
    connected = true

    const server: McpServerRef = {
      name,
      trusted: config.trusted ?? true,
      maxCallDuration: Duration.millis(MAX_CALL_DURATION_MS + 5_000)
    }

    const call: McpCaller = (tool, args, _ctx) =>
      Effect.tryPromise({
        try: (signal) =>
          client.request(
            { method: "tools/call", params: { name: tool, arguments: args as Record<string, unknown> } },
            ResultSchema,
            {
              signal,
              timeout: callTimeout,
              resetTimeoutOnProgress: true,
              maxTotalTimeout: MAX_CALL_DURATION_MS,
              // Asking for progress makes the server's progress notifications reset the timeout.
              onprogress: () => undefined
            }
          ),
        catch: (e) => e
      }).pipe(
        Effect.mapError((e) => {
          if (e instanceof McpError && e.code === ErrorCode.RequestTimeout) {
            return fail(
              `The ${name} MCP server sent neither an answer nor progress for ${tool} within ${Duration.format(Duration.millis(callTimeout))}; the call was abandoned. Try a smaller request, or another way.`
            )
          }
          // Only our side knows the connection closed: the SDK then rejects with -32000, which a
          // server may also send as its own error (then its message is the answer).
          if (isClosed) {
            return fail(
              withStderr(
                `The ${name} MCP server disconnected during ${tool}${lostBecause === undefined ? "" : ` (${lostBecause})`}; the call's effect is unknown. Its tools are unavailable until it restarts.`,
                stderr
              )
            )
          }
          return fail(`The ${name} MCP server refused ${tool}: ${describeError(e)}`)
        }),
        Effect.flatMap((raw): Effect.Effect<ToolOutput, ReturnType<typeof fail>> => {
          const problem = resultProblem(raw)
          if (problem !== undefined) {
            return Effect.fail(
              fail(
                `The ${name} MCP server answered ${tool} with something that is not a tool result (${problem}); the call's effect is unknown. Check its effect another way before calling again.`
              )
            )
          }
          const flat = flattenResult(raw)
          const title = `${name}: ${tool}`
          if (flat.isError) {
            return Effect.fail(
              fail(flat.output === "" ? `${tool} failed and the server gave no reason.` : flat.output, flat.metadata)
            )
          }
          return Effect.succeed({ title, output: flat.output, metadata: { ...flat.metadata, mcpServer: name } })
        })
      )

    const listAll = Effect.gen(function* () {
      const tools: Array<McpToolInfo> = []
      const skipped: Array<SkippedTool> = []
      let cursor: string | undefined
      for (let page = 0; page < MAX_PAGES; page++) {
        const raw = yield* Effect.tryPromise({
          try: () =>
            client.request({ method: "tools/list", params: cursor === undefined ? {} : { cursor } }, ResultSchema, {
              timeout: startupTimeout
            }),
          catch: (e) => new McpConnectError({ message: withStderr(`tools/list failed: ${describeError(e)}`, stderr) })
        })
        const parsed = parseToolsPage(raw)
        tools.push(...parsed.tools)
        skipped.push(...parsed.skipped)
        cursor = parsed.nextCursor
        if (cursor === undefined) break
      }
      return { tools, skipped }
    })

    let toolsScope: Scope.Closeable | undefined

    /**
     * Lists and swaps the registered set: the old tools go in the same step the new ones come,
     * announced as one change.
     */
    const refresh = Effect.flatMap(listAll, (listed) => registry.batch(swap(listed)))

    const swap = (listed: {
      readonly tools: ReadonlyArray<McpToolInfo>
      readonly skipped: ReadonlyArray<SkippedTool>
    }) =>
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
      })

    yield* startup("listing tools", refresh)

    while (true) {
      const next = yield* Effect.raceFirst(
        Deferred.await(closed).pipe(Effect.as("closed" as const)),
        Queue.take(relist).pipe(Effect.as("relist" as const))
      )
      if (next === "closed") return
      yield* Queue.clear(relist)
      const refreshed = yield* Effect.result(refresh)
      if (Result.isFailure(refreshed) && !isClosed) {
        yield* report.warn(`MCP server ${name}: re-listing after list_changed failed: ${refreshed.failure.message}`)
      }
    }
  })
