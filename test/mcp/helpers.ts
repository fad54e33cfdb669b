/**
 * A tool system with MCP clients for the tests, paths of the servers they talk to, and an SDK
 * client connected in memory to our own server.
 */
import { type ChildProcess, spawn } from "node:child_process"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js"
import { Effect, Layer } from "effect"
import type { FreecodeConfigData } from "../../layers/config.ts"
import { testToolSystem } from "../../layers/test.ts"
import type { Dispatcher } from "../../src/dispatch/dispatcher.ts"
import { McpClients, type McpClientsOptions } from "../../src/mcp/clients.ts"
import type { StdioServerConfig } from "../../src/mcp/config.ts"
import { makeToolServer } from "../../src/mcp/tool-server.ts"
import type { ToolRegistry } from "../../src/registry/registry.ts"

export const REPO = NodePath.resolve(import.meta.dirname, "../..")
export const BIN = NodePath.join(REPO, "node_modules/.bin")
export const FIXTURE_SERVER = NodePath.join(REPO, "test/fixtures/mcp/server.ts")

export const fixtureServer = (extra: Partial<StdioServerConfig> = {}): StdioServerConfig => ({
  command: process.execPath,
  args: [FIXTURE_SERVER],
  ...extra
})

/** The stdio command of an npm reference server from node_modules/.bin. */
export const npmServer = (bin: string, args: ReadonlyArray<string> = []): StdioServerConfig => ({
  command: NodePath.join(BIN, bin),
  args: [...args],
  // The bins are `#!/usr/bin/env node` scripts: the Node on PATH must be this one.
  env: { PATH: `${NodePath.dirname(process.execPath)}:${process.env.PATH ?? ""}` }
})

/** The whole tool system plus McpClients; messages reported land in `reports`. */
export const systemWithMcp = (
  options: Omit<McpClientsOptions, "report"> & { readonly root?: string; readonly config?: FreecodeConfigData },
  reports: Array<string> = []
) =>
  McpClients.layer({ ...options, report: (m) => Effect.sync(() => void reports.push(m)) }).pipe(
    Layer.provideMerge(
      testToolSystem({
        root: options.root ?? NodeOs.tmpdir(),
        ...(options.config === undefined ? {} : { config: options.config })
      })
    )
  )

/**
 * Our MCP server over the tool system in context, with an SDK client connected to it through
 * an in-memory pair: `use`d, then closed. `before` runs before it connects (to set handlers).
 */
export const withServedClient = <A, E, R>(
  use: (client: Client) => Effect.Effect<A, E, R>,
  before: (client: Client) => void = () => {}
) =>
  Effect.gen(function* () {
    const server = yield* makeToolServer(yield* Effect.context<Dispatcher | ToolRegistry>())
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair()
    const client = new Client({ name: "test", version: "1.0.0" })
    before(client)
    return yield* Effect.acquireUseRelease(
      Effect.promise(() => Promise.all([server.connect(serverSide), client.connect(clientSide)])),
      () => use(client),
      () => Effect.promise(() => client.close())
    )
  })

/** A `mcp --http` process started by a test, once it has said where it serves and how to get in. */
export interface HttpChild {
  readonly child: ChildProcess
  readonly url: string
  /** The token it printed (`token=…`); undefined with --auth none or --token-file. */
  readonly token: string | undefined
  readonly stderr: () => string
}

/**
 * Starts `node script ...args` (an `mcp --http` command) and waits for its serving line and the
 * line about the token that follows it (bounded: 60 s).
 */
export const startHttp = (script: string, args: ReadonlyArray<string>) =>
  new Promise<HttpChild>((resolve, reject) => {
    const child = spawn(process.execPath, [script, ...args], { stdio: ["ignore", "pipe", "pipe"] })
    let err = ""
    const timer = setTimeout(() => reject(new Error(`no URL within 60 s; stderr: ${err}`)), 60_000)
    child.stderr.on("data", (b: Buffer) => {
      err += b.toString()
      const url = err.match(/at (http:\/\/[^\s;]+\/mcp)/)?.[1]
      const token = err.match(/token=([A-Za-z0-9_-]{16,})/)?.[1]
      if (url !== undefined && (token !== undefined || /--auth none|must send the token in/.test(err))) {
        clearTimeout(timer)
        resolve({ child, url, token, stderr: () => err })
      }
    })
    child.on("exit", (code) => reject(new Error(`exited ${code}: ${err}`)))
  })

/** The client transport's options that send `token` on every request. */
export const withToken = (token: string | undefined) => ({
  requestInit: { headers: token === undefined ? {} : { authorization: `Bearer ${token}` } }
})
