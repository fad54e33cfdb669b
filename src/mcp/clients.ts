/**
 * McpClients: every configured MCP server connected in the background, each under its own scope,
 * so startup never waits on a slow or failing server. A server that fails to start is reported
 * with its stderr and left alone; one that crashes after connecting is reported, its tools are
 * unregistered (closing its scope does that), and it is restarted with exponential backoff.
 * While some connected server has resources, the resource tools (resource-tools.ts) are
 * registered too; the servers' prompts are offered to an embedder (`prompts`, `getPrompt`).
 */
import { Cause, Clock, Context, Deferred, Duration, Effect, Exit, Layer, Scope, Semaphore } from "effect"
import { FreecodeConfig, sectionOf } from "../config/load.ts"
import { Prompter } from "../prompt/prompter.ts"
import { ToolRegistry } from "../registry/registry.ts"
import { fail, type ToolFailure } from "../tool/errors.ts"
import { Workspace } from "../tool/workspace.ts"
import { askingRequest } from "./asking.ts"
import { isStdio, type McpServers, mcpServersSection } from "./config.ts"
import type { Era } from "./connect.ts"
import { type McpLink, StderrTail } from "./link.ts"
import type { SkippedTool } from "./list.ts"
import { makeListResourcesTool, makeReadResourceTool } from "./resource-tools.ts"
import { listPrompts, type McpPrompt } from "./resources.ts"
import { type ListCache, runSession } from "./session.ts"

export type McpServerState = "connecting" | "connected" | "restarting" | "failed"

export interface McpServerStatus {
  readonly name: string
  readonly transport: "stdio" | "http"
  readonly state: McpServerState
  /** Our names of the tools it has registered now. */
  readonly tools: ReadonlyArray<string>
  readonly skipped: ReadonlyArray<SkippedTool>
  /** Why it is failed or restarting. */
  readonly error?: string
  /** The last lines the server wrote to stderr. */
  readonly stderr: string
  readonly restarts: number
  /**
   * How many times its tool list has been read: once per connection (unless the list read
   * before is still fresh by its cache hint) plus once per change.
   */
  readonly lists: number
  /** The revision it speaks, once connected. */
  readonly protocol?: Era
  /** Whether it offers resources (read through the resource tools). */
  readonly resources: boolean
  /** Whether changes to its tools reach us on a `subscriptions/listen` stream (2026 era). */
  readonly listening: boolean
}

export interface RestartPolicy {
  readonly initialDelay: Duration.Input
  readonly maxDelay: Duration.Input
  /** Consecutive restarts without a stable connection before giving up. */
  readonly maxAttempts: number
  /** A connection that lasted this long resets the count. */
  readonly stableAfter: Duration.Input
}

export const DEFAULT_RESTART: RestartPolicy = {
  initialDelay: "1 second",
  maxDelay: "30 seconds",
  maxAttempts: 5,
  stableAfter: "1 minute"
}

export interface McpClientsOptions {
  readonly servers: McpServers
  /** Where failures and warnings go (the CLI: stderr). Default: only into `status`. */
  readonly report?: (message: string) => Effect.Effect<void>
  readonly restart?: Partial<RestartPolicy>
}

/** The wait before restart number `attempt` (1-based): doubling from initialDelay, capped at maxDelay. */
export const restartDelay = (policy: RestartPolicy, attempt: number): Duration.Duration =>
  Duration.millis(
    Math.min(
      Duration.toMillis(Duration.fromInputUnsafe(policy.initialDelay)) * 2 ** (attempt - 1),
      Duration.toMillis(Duration.fromInputUnsafe(policy.maxDelay))
    )
  )

const describeFailure = (failure: unknown): string =>
  typeof failure === "object" && failure !== null && "message" in failure && typeof failure.message === "string"
    ? failure.message
    : String(failure)

export class McpClients extends Context.Service<
  McpClients,
  {
    /** Each configured server's state, in config order. */
    readonly status: Effect.Effect<ReadonlyArray<McpServerStatus>>
    /** Completes once every server's first connection attempt has settled (connected or failed). */
    readonly ready: Effect.Effect<void>
    /** The prompts of every connected server that has prompts (a server failing to list them is left out). */
    readonly prompts: Effect.Effect<ReadonlyArray<McpPrompt>>
    /**
     * One prompt's messages, as the server returns them (`prompts/get`). A question the server
     * asks on the way goes to the system's asker, as the person of `sessionId` when given.
     */
    readonly getPrompt: (
      server: string,
      name: string,
      args?: Readonly<Record<string, string>>,
      sessionId?: string
    ) => Effect.Effect<unknown, ToolFailure>
  }
>()("freecode/McpClients") {
  static readonly layer = (options: McpClientsOptions) =>
    Layer.effect(
      McpClients,
      Effect.gen(function* () {
        const registry = yield* ToolRegistry
        const { root } = yield* Workspace
        const report = options.report ?? (() => Effect.void)
        // Who answers a server's question during a call: the system's asker, when it can show a form.
        const prompter = yield* Effect.serviceOption(Prompter)
        const ask = prompter._tag === "Some" ? prompter.value.elicit : undefined
        const canVisit = prompter._tag === "Some" ? prompter.value.canVisit : undefined
        const policy = { ...DEFAULT_RESTART, ...options.restart }
        // Each server's current status; stderr is read live, not at the last state change.
        const statuses = new Map<string, () => McpServerStatus>()
        const settled: Array<Deferred.Deferred<void>> = []
        const layerScope = yield* Effect.scope
        // The live connections, in config order; the resource tools while any has resources.
        const links = new Map<string, McpLink>()
        const order = Object.keys(options.servers)
        const connectedLinks = () => order.flatMap((n) => links.get(n) ?? [])
        const resourceServers = () => connectedLinks().filter((l) => l.resources)
        const resourceTools = [makeListResourcesTool(resourceServers), makeReadResourceTool(resourceServers)]
        let resourceScope: Scope.Closeable | undefined
        const lock = yield* Semaphore.make(1)
        const syncResourceTools = Semaphore.withPermits(
          lock,
          1
        )(
          Effect.gen(function* () {
            const wanted = resourceServers().length > 0
            if (wanted && resourceScope === undefined) {
              const scope = yield* Scope.fork(layerScope)
              resourceScope = scope
              yield* registry.batch(
                Effect.forEach(resourceTools, (tool) =>
                  Effect.ignore(Scope.provide(registry.registerScoped(tool), scope))
                )
              )
            } else if (!wanted && resourceScope !== undefined) {
              const scope = resourceScope
              resourceScope = undefined
              yield* registry.batch(Scope.close(scope, Exit.void))
            }
          })
        )

        for (const [name, config] of Object.entries(options.servers)) {
          const stderr = new StderrTail()
          const first = yield* Deferred.make<void>()
          settled.push(first)
          let status: McpServerStatus = {
            name,
            transport: isStdio(config) ? "stdio" : "http",
            state: "connecting",
            tools: [],
            skipped: [],
            stderr: "",
            restarts: 0,
            lists: 0,
            resources: false,
            listening: false
          }
          const cache: ListCache = { freshUntil: 0 }
          const set = (patch: Partial<McpServerStatus>) => {
            status = { ...status, ...patch }
          }
          statuses.set(name, () => ({ ...status, stderr: stderr.value }))

          const supervise = Effect.gen(function* () {
            let everConnected = false
            let attempts = 0
            while (true) {
              const started = yield* Clock.currentTimeMillis
              const exit = yield* Effect.exit(
                Effect.scoped(
                  runSession({
                    name,
                    config,
                    root,
                    registry,
                    stderr,
                    cache,
                    ...(ask === undefined ? {} : { ask }),
                    ...(canVisit === undefined ? {} : { canVisit }),
                    report: {
                      warn: report,
                      listed: () => set({ lists: status.lists + 1 }),
                      listening: (open) => Effect.sync(() => set({ listening: open })),
                      connected: (link) =>
                        Effect.gen(function* () {
                          set({ protocol: link.era, resources: link.resources })
                          links.set(name, link)
                          yield* syncResourceTools
                          yield* Effect.addFinalizer(() =>
                            Effect.suspend(() => {
                              if (links.get(name) === link) links.delete(name)
                              set({ listening: false })
                              return syncResourceTools
                            })
                          )
                        }),
                      tools: (tools, skipped) =>
                        Effect.gen(function* () {
                          everConnected = true
                          const { error: _gone, ...rest } = status
                          status = rest
                          set({ state: "connected", tools, skipped })
                          yield* Deferred.succeed(first, undefined)
                        })
                    }
                  })
                )
              )
              // The session's scope is closed: its tools are unregistered.
              const lived = (yield* Clock.currentTimeMillis) - started
              const error = Exit.isFailure(exit)
                ? describeFailure(Cause.squash(exit.cause))
                : `the server ${isStdio(config) ? "exited" : "closed the connection"}${stderr.value === "" ? "" : `\nstderr:\n${stderr.value}`}`
              if (!everConnected) {
                set({ state: "failed", error, tools: [] })
                yield* report(`MCP server ${name} failed to start: ${error}`)
                yield* Deferred.succeed(first, undefined)
                return
              }
              attempts = lived >= Duration.toMillis(Duration.fromInputUnsafe(policy.stableAfter)) ? 1 : attempts + 1
              if (attempts > policy.maxAttempts) {
                set({ state: "failed", error, tools: [] })
                yield* report(`MCP server ${name} stopped (${error}); gave up after ${policy.maxAttempts} restarts.`)
                return
              }
              const delay = restartDelay(policy, attempts)
              set({ state: "restarting", error, tools: [], restarts: status.restarts + 1 })
              yield* report(
                `MCP server ${name} stopped (${error}); its tools were removed; restarting in ${Duration.format(delay)}.`
              )
              yield* Effect.sleep(delay)
            }
          })
          yield* Effect.forkScoped(supervise)
        }

        return McpClients.of({
          status: Effect.sync(() => [...statuses.values()].map((view) => view())),
          ready: Effect.forEach(settled, Deferred.await, { discard: true }),
          prompts: Effect.suspend(() =>
            Effect.map(
              Effect.forEach(
                connectedLinks().filter((l) => l.prompts),
                (link) => Effect.orElseSucceed(listPrompts(link), () => []),
                { concurrency: "unbounded" }
              ),
              (lists) => lists.flat()
            )
          ),
          getPrompt: (server, name, args, sessionId) =>
            Effect.suspend(() => {
              const link = links.get(server)
              if (link === undefined || !link.prompts) {
                return Effect.fail(fail(`No connected MCP server named "${server}" has prompts.`))
              }
              // The server may ask the person on the way, as during a tool call.
              return askingRequest(
                link,
                link.person,
                "prompts/get",
                { name, ...(args === undefined ? {} : { arguments: args }) },
                `prompts/get of ${name}`,
                sessionId
              )
            })
        })
      })
    )

  /**
   * The servers of the project's configuration (`mcpServers` in freecode.json and .mcp.json).
   * Failures go to stderr, never stdout: over stdio, stdout is the MCP server's protocol channel.
   */
  static readonly layerFromConfig = Layer.unwrap(
    Effect.map(FreecodeConfig.use(Effect.succeed), (config) =>
      McpClients.layer({
        servers: sectionOf(config, mcpServersSection) ?? {},
        report: (message) => Effect.sync(() => void process.stderr.write(`freecode-tools: ${message}\n`))
      })
    )
  )
}
