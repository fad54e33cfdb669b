/** The MCP client against a server that misbehaves on purpose (test/fixtures/mcp/faulty.ts). */
import { spawn } from "node:child_process"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { CallToolResultSchema, McpError, ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js"
import { Effect, Layer } from "effect"
import { testToolSystem } from "../../layers/test.ts"
import { Dispatcher } from "../../src/dispatch/dispatcher.ts"
import { McpClients } from "../../src/mcp/clients.ts"
import type { McpServerConfig } from "../../src/mcp/config.ts"
import type { ToolRegistry } from "../../src/registry/registry.ts"
import { REPO, systemWithMcp, withServedClient } from "./helpers.ts"

const FAULTY = NodePath.join(REPO, "test/fixtures/mcp/faulty.ts")
const faulty = (extra: Partial<McpServerConfig> = {}): McpServerConfig =>
  ({ command: process.execPath, args: [FAULTY], ...extra }) as McpServerConfig

const call = (name: string, args: unknown) =>
  Effect.gen(function* () {
    const dispatcher = yield* Dispatcher
    return yield* dispatcher.dispatch(
      { id: `c_${Math.random().toString(36).slice(2)}`, name, args },
      { sessionId: "s", approve: () => Effect.succeed(true) }
    )
  })

const stateOf = (name: string) =>
  Effect.gen(function* () {
    const all = yield* (yield* McpClients).status
    return all.find((s) => s.name === name)!
  })

/** Starts the faulty server over HTTP; resolves with its URL. Killed when the scope closes. */
const faultyOverHttp = Effect.gen(function* () {
  const child = spawn(process.execPath, [FAULTY, "--http", "0"], { stdio: ["ignore", "ignore", "pipe"] })
  yield* Effect.addFinalizer(() => Effect.sync(() => child.kill("SIGKILL")))
  return yield* Effect.promise(
    () =>
      new Promise<string>((resolve) => {
        let err = ""
        child.stderr.on("data", (b: Buffer) => {
          err += b.toString()
          const found = /listening at (\S+)/.exec(err)?.[1]
          if (found !== undefined) resolve(found)
        })
      })
  )
})

describe("the MCP client when a server misbehaves", () => {
  it.live(
    "a server's own -32000 error keeps its message and is no disconnect; content that is not an array is a typed error",
    () =>
      Effect.gen(function* () {
        yield* (yield* McpClients).ready
        const own = yield* call("mcp__bad__own_error", {})
        expect(own.status).toBe("error")
        expect(own.modelOutput).toContain("quota exceeded: 3 calls a minute, try again in 20 s")
        expect(own.modelOutput).not.toContain("disconnected")
        // Still connected, tools still there.
        expect((yield* stateOf("bad")).state).toBe("connected")
        expect((yield* call("mcp__bad__filler_0", {})).modelOutput).toBe("filler_0 ran")

        const stringy = yield* call("mcp__bad__string_content", {})
        expect(stringy.status).toBe("error")
        expect(stringy.error?.tag).toBe("ToolFailure")
        expect(stringy.modelOutput).toContain("not a tool result")
        expect(stringy.modelOutput).toContain("content of type string")
      }).pipe(Effect.provide(systemWithMcp({ servers: { bad: faulty() } }))),
    60_000
  )

  it.live(
    "an answer over the stdio transport's 10 MiB line limit fails the call saying so, not as a bare disconnect",
    () =>
      Effect.gen(function* () {
        yield* (yield* McpClients).ready
        // Under the limit it comes through (the model's copy cut to the budget as usual).
        const fine = yield* call("mcp__bad__huge", { bytes: 1_000_000 })
        expect([fine.status, fine.outputChars]).toEqual(["ok", 1_000_000])
        const huge = yield* call("mcp__bad__huge", { bytes: 11 * 1024 * 1024 })
        expect(huge.status).toBe("error")
        expect(huge.modelOutput).toContain("disconnected during huge")
        expect(huge.modelOutput).toContain("over the 10 MiB a stdio message may be")
      }).pipe(Effect.provide(systemWithMcp({ servers: { bad: faulty() }, restart: { initialDelay: "30 seconds" } }))),
    // 12 MB through a pipe and a JSON parser: tens of seconds on a loaded machine; the bound is for hangs.
    120_000
  )

  it.live(
    "an HTTP server that dies mid-call is noticed when its stream breaks, with the disconnect error stdio gives",
    () =>
      Effect.gen(function* () {
        const url = yield* faultyOverHttp
        yield* Effect.gen(function* () {
          yield* (yield* McpClients).ready
          expect((yield* stateOf("web")).state).toBe("connected")
          const died = yield* call("mcp__web__die", {})
          expect(died.status).toBe("error")
          // Not the call timeout's "sent neither an answer nor progress … try a smaller request".
          expect(died.modelOutput).toContain("The web MCP server disconnected during die")
          expect(died.modelOutput).not.toContain("neither an answer")
          // And the session ends: its tools go, a restart is scheduled.
          let state = (yield* stateOf("web")).state
          for (let i = 0; i < 100 && state === "connected"; i++) {
            yield* Effect.sleep("50 millis")
            state = (yield* stateOf("web")).state
          }
          expect(["restarting", "failed"]).toContain(state)
        }).pipe(
          Effect.provide(
            systemWithMcp({
              // A call timeout the test would notice: before, the death was seen only at its end.
              servers: { web: { url, timeout: 20_000 } },
              restart: { initialDelay: "30 seconds" }
            })
          )
        )
      }),
    60_000
  )

  it.live(
    "a server's tools reach our MCP clients as one tools/list_changed per change, not one per tool",
    () =>
      Effect.gen(function* () {
        const system = yield* Effect.context<Dispatcher | ToolRegistry>()
        let changed = 0
        yield* withServedClient(
          (client) =>
            Effect.gen(function* () {
              const settle = Effect.gen(function* () {
                // Notifications travel through the in-memory pair asynchronously.
                for (let last = -1; last !== changed; ) {
                  last = changed
                  yield* Effect.sleep("300 millis")
                }
              })
              yield* Effect.gen(function* () {
                yield* (yield* McpClients).ready
                yield* settle
                // 11 tools registered in one swap: one announcement.
                expect(changed).toBe(1)
                const listed = yield* Effect.promise(() => client.listTools())
                expect(listed.tools.filter((t) => t.name.startsWith("mcp__bad__"))).toHaveLength(11)
                // One tool added: the old 11 go and 12 come, still one announcement.
                expect((yield* call("mcp__bad__grow", {})).modelOutput).toBe("grown")
                for (let i = 0; i < 100 && changed < 2; i++) yield* Effect.sleep("50 millis")
                yield* settle
                expect(changed).toBe(2)
                const relisted = yield* Effect.promise(() => client.listTools())
                expect(relisted.tools.map((t) => t.name)).toContain("mcp__bad__extra")
              }).pipe(
                Effect.provide(
                  McpClients.layer({ servers: { bad: faulty() } }).pipe(Layer.provide(Layer.succeedContext(system)))
                )
              )
            }),
          (client) => {
            client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
              changed++
            })
          }
        )
      }).pipe(Effect.provide(Layer.fresh(testToolSystem({ root: NodeOs.tmpdir() })))),
    60_000
  )

  it.live("tools/call with arguments that are not an object is refused as invalid params, saying what to send", () =>
    Effect.gen(function* () {
      yield* withServedClient((client) =>
        Effect.gen(function* () {
          const refusal = (params: Record<string, unknown>) =>
            Effect.promise(() =>
              client.request({ method: "tools/call", params } as never, CallToolResultSchema).then(
                () => undefined,
                (e: unknown) => e as McpError
              )
            )
          for (const [args, kind] of [
            ["a string", "string"],
            [[1, 2], "an array"],
            [null, "null"],
            [7, "number"]
          ] as const) {
            const e = yield* refusal({ name: "ls", arguments: args })
            expect(e).toBeInstanceOf(McpError)
            expect(e!.code).toBe(-32602)
            expect(e!.message).toContain(`params.arguments must be a JSON object of the tool's parameters; got ${kind}`)
            expect(e!.message).not.toContain("invalid_type")
          }
          const nameless = yield* refusal({ arguments: {} })
          expect([nameless!.code, nameless!.message]).toEqual([-32602, expect.stringContaining("needs params.name")])
          // The server is still there for a good call.
          const ok = yield* Effect.promise(() => client.callTool({ name: "ls", arguments: {} }))
          expect(ok.isError).not.toBe(true)
        })
      )
    }).pipe(Effect.provide(Layer.fresh(testToolSystem({ root: NodeOs.tmpdir() }))))
  )
})
