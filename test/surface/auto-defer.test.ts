/**
 * Auto-deferral and per-model exclusion through the real Dispatcher, with a real MCP server of
 * 60 tools (test/fixtures/mcp/catalogue.ts, from real servers' saved tool lists).
 */
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { NodeServices } from "@effect/platform-node"
import { afterAll, describe, expect, it } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import { toolSystem } from "../../layers/system.ts"
import { McpClients } from "../../src/mcp/clients.ts"
import { OutputConfig } from "../../src/output/config.ts"
import { wiringFor } from "../../src/surface/models.ts"
import { surfaceIn } from "../../src/surface/surface.ts"
import { countTokens } from "../../src/surface/tokens.ts"

const REPO = NodePath.resolve(import.meta.dirname, "../..")
const root = NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "freecode-autodefer-"))
afterAll(() => NodeFs.rmSync(root, { recursive: true, force: true }))

const system = Effect.gen(function* () {
  const layer = toolSystem({
    root,
    outputConfig: OutputConfig.layerWith({}),
    config: {
      mcpServers: {
        cat: { command: process.execPath, args: [NodePath.join(REPO, "test/fixtures/mcp/catalogue.ts"), "60"] }
      }
    }
  }).pipe(Layer.provideMerge(NodeServices.layer))
  const context = yield* Layer.build(layer)
  yield* Context.get(context, McpClients).ready
  return context
})

const ids = (tools: ReadonlyArray<{ readonly id: string }>) => tools.map((t) => t.id)

describe("auto-deferral", () => {
  it.live(
    "over the threshold, MCP tools leave the declared list for tool_search; under it, all are declared",
    () =>
      Effect.gen(function* () {
        const context = yield* system
        const plain = surfaceIn(context, { surface: "all" })
        const everything = yield* plain.declared()
        const mcp = everything.filter((t) => t.source === "mcp")
        expect(mcp).toHaveLength(60)
        const total = everything.reduce(
          (n, t) => n + countTokens({ name: t.id, description: t.description, inputSchema: t.inputSchema }),
          0
        )

        const high = surfaceIn(context, { surface: "all", autoDeferTokens: total })
        expect(ids(yield* high.declared())).toEqual(ids(everything))
        expect(yield* high.autoDeferred).toBeUndefined()

        const low = surfaceIn(context, { surface: "all", autoDeferTokens: total - 1 })
        expect(yield* low.autoDeferred).toEqual({ tokens: total, threshold: total - 1, deferred: 60 })
        const declared = ids(yield* low.declared())
        expect(declared).toEqual([...ids(everything.filter((t) => t.source !== "mcp")), "tool_search", "tool_call"])
        expect(ids(yield* low.searchable)).toEqual(ids(mcp))

        const found = yield* low.dispatch(
          { id: "a1", name: "tool_search", args: { query: "list directory" } },
          { sessionId: "a" }
        )
        expect((found.metadata.matches as Array<string>)[0]).toBe("mcp__cat__desktopcommander_list_directory")
        const called = yield* low.dispatch(
          {
            id: "a2",
            name: "tool_call",
            args: {
              name: "mcp__cat__desktopcommander_list_directory",
              arguments: { path: "/tmp", depth: null }
            }
          },
          { sessionId: "a", approve: () => Effect.succeed(true) }
        )
        // A strict-mode null for the optional depth is read as absent before the server's schema sees it.
        expect(called).toMatchObject({ tool: "mcp__cat__desktopcommander_list_directory", status: "ok" })
        expect(called.modelOutput).toBe('desktopcommander_list_directory {"path":"/tmp"}')
      }),
    90_000
  )

  it.live(
    "per-model wiring hides the other edit tool from the declared list and from search",
    () =>
      Effect.gen(function* () {
        const context = yield* system
        const patcher = surfaceIn(context, { surface: "all", exclude: wiringFor("gpt-5").hide })
        const declared = ids(yield* patcher.declared())
        expect(declared).toContain("apply_patch")
        expect(declared).not.toContain("edit")
        const claude = surfaceIn(context, {
          surface: "deferred",
          core: ["read", "edit"],
          exclude: wiringFor("claude-opus-4").hide
        })
        expect(ids(yield* claude.declared())).toEqual(["edit", "read", "tool_search", "tool_call"])
        expect(ids(yield* claude.searchable)).not.toContain("apply_patch")
      }),
    90_000
  )
})
