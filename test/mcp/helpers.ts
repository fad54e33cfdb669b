/** A tool system with MCP clients for the tests, and paths of the servers they talk to. */
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { Effect, Layer } from "effect"
import { testToolSystem } from "../../src/layers/test.ts"
import { McpClients, type McpClientsOptions } from "../../src/mcp/clients.ts"
import type { StdioServerConfig } from "../../src/mcp/config.ts"

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
  options: Omit<McpClientsOptions, "report"> & { readonly root?: string },
  reports: Array<string> = []
) =>
  McpClients.layer({ ...options, report: (m) => Effect.sync(() => void reports.push(m)) }).pipe(
    Layer.provideMerge(testToolSystem({ root: options.root ?? NodeOs.tmpdir() }))
  )
