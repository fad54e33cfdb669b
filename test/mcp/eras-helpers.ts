/** The eras fixture server (test/fixtures/mcp/eras-server.ts), a person answering in turn, and polling helpers for McpClients tests. */
import { type ChildProcess, spawn } from "node:child_process"
import * as NodePath from "node:path"
import { Effect } from "effect"
import { Dispatcher } from "../../src/dispatch/dispatcher.ts"
import { McpClients, type McpServerStatus } from "../../src/mcp/clients.ts"
import type { StdioServerConfig } from "../../src/mcp/config.ts"
import type { FormOutcome, FormRequest } from "../../src/prompt/form.ts"
import { Prompter } from "../../src/prompt/prompter.ts"
import { ToolRegistry } from "../../src/registry/registry.ts"
import { REPO } from "./helpers.ts"

/** The person a server's questions reach: answers each with the next answer given, and keeps what was asked. */
export const answeringPerson = (answers: Array<FormOutcome>, asked: Array<FormRequest>) =>
  Prompter.layerWith(
    () => Effect.succeed({ _tag: "Unavailable", reason: "not used" }),
    (request) =>
      Effect.sync(() => {
        asked.push(request)
        return answers.shift() ?? { _tag: "Unavailable", reason: "the test ran out of answers" }
      })
  )

export const ERAS_SERVER = NodePath.join(REPO, "test/fixtures/mcp/eras-server.ts")

/**
 * The fixture over stdio. A loaded machine can take many seconds to start a Node server, and a
 * 2026 server silent for half the startup timeout is taken for a 2025 one: the timeout is wide.
 */
export const erasStdio = (args: ReadonlyArray<string>, extra: Partial<StdioServerConfig> = {}): StdioServerConfig => ({
  command: process.execPath,
  args: [ERAS_SERVER, ...args],
  startupTimeout: 120_000,
  ...extra
})

/** Starts the fixture over HTTP; its URL once it listens (bounded: 60 s). */
export const startErasHttp = (args: ReadonlyArray<string>) =>
  Effect.acquireRelease(
    Effect.promise(
      () =>
        new Promise<{ child: ChildProcess; url: string; stderr: () => string }>((resolve, reject) => {
          const child = spawn(process.execPath, [ERAS_SERVER, ...args, "--http", "0"], {
            stdio: ["ignore", "ignore", "pipe"]
          })
          let err = ""
          const timer = setTimeout(() => reject(new Error(`no URL within 60 s: ${err}`)), 60_000)
          child.stderr.on("data", (b: Buffer) => {
            err += b.toString()
            const url = err.match(/listening at (\S+)/)?.[1]
            if (url !== undefined) {
              clearTimeout(timer)
              resolve({ child, url, stderr: () => err })
            }
          })
        })
    ),
    ({ child }) => Effect.sync(() => child.kill("SIGTERM"))
  )

export const callTool = (name: string, args: unknown, approve = true) =>
  Effect.gen(function* () {
    const dispatcher = yield* Dispatcher
    return yield* dispatcher.dispatch(
      { id: `c_${Math.random().toString(36).slice(2)}`, name, args },
      { sessionId: "s", ...(approve ? { approve: () => Effect.succeed(true) } : {}) }
    )
  })

export const statusOf = (name: string): Effect.Effect<McpServerStatus, never, McpClients> =>
  Effect.gen(function* () {
    const all = yield* (yield* McpClients).status
    return all.find((s) => s.name === name)!
  })

/** Polls until `check` holds; the bound guards against a hang only. */
export const until = <A, R>(what: string, get: Effect.Effect<A, never, R>, check: (a: A) => boolean) =>
  Effect.gen(function* () {
    for (let i = 0; i < 800; i++) {
      const value = yield* get
      if (check(value)) return value
      yield* Effect.sleep("50 millis")
    }
    return yield* Effect.die(new Error(`timed out waiting for ${what}`))
  })

export const toolIds: Effect.Effect<ReadonlyArray<string>, never, ToolRegistry> = Effect.gen(function* () {
  const tools = yield* (yield* ToolRegistry).tools
  return tools.map((t) => t.id)
})
