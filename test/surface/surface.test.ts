/**
 * Surfaces through the real Dispatcher: the built-in tools plus a real MCP server (the fixture
 * server over stdio), configured in the project config, with real permissions and hooks.
 */
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { NodeServices } from "@effect/platform-node"
import { afterAll, describe, expect, it } from "@effect/vitest"
import { Context, Effect, Layer, Option } from "effect"
import type { FreecodeConfigData } from "../../layers/config.ts"
import { toolSystem } from "../../layers/system.ts"
import { Dispatcher } from "../../src/dispatch/dispatcher.ts"
import type { HookInput } from "../../src/hooks/hooks.ts"
import { McpClients } from "../../src/mcp/clients.ts"
import { OutputConfig } from "../../src/output/config.ts"
import { type SurfaceOptions, surfaceIn, ToolSurface } from "../../src/surface/surface.ts"

const REPO = NodePath.resolve(import.meta.dirname, "../..")
const root = NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "freecode-surface-"))
NodeFs.writeFileSync(NodePath.join(root, "notes.txt"), "alpha\nbeta\n")
afterAll(() => NodeFs.rmSync(root, { recursive: true, force: true }))

const fx = { command: process.execPath, args: [NodePath.join(REPO, "test/fixtures/mcp/server.ts")] }
const hooked: Array<HookInput> = []

/** The real system (built-ins + the fixture MCP server) under a surface, once its server is ready. */
const system = (options: SurfaceOptions, config: FreecodeConfigData = {}) =>
  Effect.gen(function* () {
    const layer = toolSystem({
      root,
      outputConfig: OutputConfig.layerWith({}),
      config: { mcpServers: { fx }, ...config },
      hooks: [
        {
          event: "PreToolUse",
          name: "record",
          matcher: "mcp__fx__.*",
          run: (input) =>
            Effect.sync(() => {
              hooked.push(input)
              return {}
            })
        }
      ]
    }).pipe(Layer.provideMerge(NodeServices.layer))
    const context = yield* Layer.build(layer)
    yield* Context.get(context, McpClients).ready
    return surfaceIn(context, options)
  })

const names = (tools: ReadonlyArray<{ readonly id: string }>) => tools.map((t) => t.id)
const ctx = (sessionId: string) => ({ sessionId })

describe("deferred surface, bridge strategy", () => {
  it.live(
    "declares the core plus tool_search and tool_call; search finds an MCP tool; tool_call runs the real tool",
    () =>
      Effect.gen(function* () {
        const surface = yield* system({ surface: "deferred" })
        const before = yield* surface.declared("s1")
        expect(names(before)).toEqual(["bash", "read", "tool_search", "tool_call"])
        const paramBefore = JSON.stringify(yield* surface.toolsParam("anthropic", "s1"))

        const found = yield* surface.dispatch({ id: "c1", name: "tool_search", args: { query: "sum tree" } }, ctx("s1"))
        expect(found.status).toBe("ok")
        expect((found.metadata.matches as Array<string>)[0]).toBe("mcp__fx__tree_sum")
        const line = found.modelOutput.split("\n").find((l) => l.startsWith("{"))!
        const schema = JSON.parse(line) as { name: string; input_schema: { properties: Record<string, unknown> } }
        expect(schema.name).toBe("mcp__fx__tree_sum")
        expect(Object.keys(schema.input_schema.properties)).toEqual(["root"])
        expect(found.modelOutput).toContain('tool_call {"name": "<name>"')

        const hooksBefore = hooked.length
        const sum = yield* surface.dispatch(
          {
            id: "c2",
            name: "tool_call",
            args: { name: "mcp__fx__tree_sum", arguments: { root: { value: 2, children: [{ value: 5 }] } } }
          },
          ctx("s1")
        )
        expect(sum).toMatchObject({ id: "c2", tool: "mcp__fx__tree_sum", status: "ok", modelOutput: "7" })
        expect(sum.metadata.via).toBe("tool_call")
        // The hook saw the real tool and its real input, not the bridge.
        expect(hooked.slice(hooksBefore).map((h) => h.tool_name)).toEqual(["mcp__fx__tree_sum"])
        expect(hooked.at(-1)!.tool_input).toEqual({ root: { value: 2, children: [{ value: 5 }] } })

        // The declared list, and so the cached prefix, never changed.
        expect(JSON.stringify(yield* surface.toolsParam("anthropic", "s1"))).toBe(paramBefore)
      }),
    60_000
  )

  it.live(
    "validation runs against the target's own schema; arguments sent as a JSON string are accepted",
    () =>
      Effect.gen(function* () {
        const surface = yield* system({ surface: "deferred" })
        const bad = yield* surface.dispatch(
          { id: "b1", name: "tool_call", args: { name: "mcp__fx__tree_sum", arguments: { root: { value: "x" } } } },
          ctx("s2")
        )
        expect(bad).toMatchObject({ tool: "mcp__fx__tree_sum", status: "error", error: { tag: "InvalidArguments" } })
        expect(bad.modelOutput).toContain("root.value")

        const asString = yield* surface.dispatch(
          {
            id: "b2",
            name: "tool_call",
            args: JSON.stringify({ name: "read", arguments: '{"filePath":"notes.txt"}' })
          },
          ctx("s2")
        )
        expect(asString).toMatchObject({ tool: "read", status: "ok" })
        expect(asString.modelOutput).toContain("1\talpha")

        const noName = yield* surface.dispatch({ id: "b3", name: "tool_call", args: { arguments: {} } }, ctx("s2"))
        expect(noName).toMatchObject({ tool: "tool_call", status: "error", error: { tag: "InvalidArguments" } })
        expect(noName.modelOutput).toContain("name")

        const unknown = yield* surface.dispatch(
          { id: "b4", name: "tool_call", args: { name: "mcp__fx__tree_summ", arguments: {} } },
          ctx("s2")
        )
        expect(unknown.status).toBe("error")
        expect(unknown.modelOutput).toContain('Did you mean "mcp__fx__tree_sum"')
      }),
    60_000
  )

  it.live(
    "a denied tool never appears in search results, and tool_call is refused by the real rule",
    () =>
      Effect.gen(function* () {
        const surface = yield* system(
          { surface: "deferred" },
          { permissions: { deny: ["mcp__fx__shape_area", "WebFetch"] } }
        )
        const searchable = names(yield* surface.searchable)
        expect(searchable).toContain("mcp__fx__tree_sum")
        expect(searchable).not.toContain("mcp__fx__shape_area")
        expect(searchable).not.toContain("webfetch")

        const ranked = yield* surface.dispatch({ id: "d1", name: "tool_search", args: { query: "area" } }, ctx("s3"))
        expect(ranked.metadata.matches).not.toContain("mcp__fx__shape_area")
        const selected = yield* surface.dispatch(
          { id: "d2", name: "tool_search", args: { query: "select:mcp__fx__shape_area,mcp__fx__tree_sum" } },
          ctx("s3")
        )
        expect(selected.metadata.matches).toEqual(["mcp__fx__tree_sum"])
        expect(selected.modelOutput).toContain('No tool named "mcp__fx__shape_area"')

        const refused = yield* surface.dispatch(
          {
            id: "d3",
            name: "tool_call",
            args: { name: "mcp__fx__shape_area", arguments: { shape: { kind: "circle", r: 1 } } }
          },
          ctx("s3")
        )
        expect(refused).toMatchObject({ tool: "mcp__fx__shape_area", status: "denied" })
        expect(refused.modelOutput).toContain("mcp__fx__shape_area")
      }),
    60_000
  )

  it.live(
    "one turn with a search and a bridged call runs in call order; a core tool is called directly",
    () =>
      Effect.gen(function* () {
        const surface = yield* system({ surface: "deferred", core: ["read"] })
        expect(names(yield* surface.declared())).toEqual(["read", "tool_search", "tool_call"])
        const results = yield* surface.dispatchBatch(
          [
            { id: "t1", name: "tool_search", args: { query: "select:glob" } },
            { id: "t2", name: "read", args: { filePath: "notes.txt" } },
            { id: "t3", name: "tool_call", args: { name: "glob", arguments: { pattern: "*.txt" } } }
          ],
          ctx("s4")
        )
        expect(results.map((r) => [r.id, r.tool, r.status])).toEqual([
          ["t1", "tool_search", "ok"],
          ["t2", "read", "ok"],
          ["t3", "glob", "ok"]
        ])
        expect(results[2]!.modelOutput).toContain("notes.txt")
        const bad = yield* surface.dispatch({ id: "t4", name: "tool_search", args: { query: "select:" } }, ctx("s4"))
        expect(bad.status).toBe("error")
        expect(bad.modelOutput).toContain("select: needs names")
        const empty = yield* surface.dispatch({ id: "t5", name: "tool_search", args: { query: "zzzz" } }, ctx("s4"))
        expect(empty.status).toBe("ok")
        expect(empty.modelOutput).toMatch(/^No tool matches "zzzz" \(\d+ tools can be searched\)/)
      }),
    60_000
  )
})

describe("deferred surface, expand strategy", () => {
  it.live(
    "found tools join the declared list after the unchanged prefix, per session",
    () =>
      Effect.gen(function* () {
        const surface = yield* system({ surface: "deferred", strategy: "expand" })
        const prefix = names(yield* surface.declared("e1"))
        expect(prefix).toEqual(["bash", "read", "tool_search"])
        const before = (yield* surface.toolsParam("openai", "e1")) as ReadonlyArray<unknown>

        const found = yield* surface.dispatch(
          { id: "x1", name: "tool_search", args: { query: "select:mcp__fx__tree_sum,grep" } },
          ctx("e1")
        )
        expect(found.modelOutput).toContain("They are now declared: call them directly.")
        expect(names(yield* surface.declared("e1"))).toEqual([...prefix, "mcp__fx__tree_sum", "grep"])
        const after = (yield* surface.toolsParam("openai", "e1")) as ReadonlyArray<unknown>
        expect(after.slice(0, before.length)).toEqual(before)
        // Another session's list is its own.
        expect(names(yield* surface.declared("e2"))).toEqual(prefix)

        const sum = yield* surface.dispatch(
          { id: "x2", name: "mcp__fx__tree_sum", args: { root: { value: 4 } } },
          ctx("e1")
        )
        expect(sum).toMatchObject({ tool: "mcp__fx__tree_sum", status: "ok", modelOutput: "4" })
        // Expand has no bridge.
        const bridge = yield* surface.dispatch({ id: "x3", name: "tool_call", args: { name: "grep" } }, ctx("e1"))
        expect(bridge.status).toBe("error")
        expect(bridge.modelOutput).toContain('No tool named "tool_call"')
      }),
    60_000
  )
})

describe("shell surface", () => {
  it.live(
    "declares bash and output only; anything else is refused with what to do instead",
    () =>
      Effect.gen(function* () {
        const surface = yield* system({ surface: "shell" })
        expect(names(yield* surface.declared())).toEqual(["bash", "output"])
        expect(yield* surface.searchable).toEqual([])
        const read = yield* surface.dispatch({ id: "h1", name: "read", args: { filePath: "notes.txt" } }, ctx("h"))
        expect(read).toMatchObject({ tool: "read", status: "error" })
        expect(read.modelOutput).toContain("Only bash and output are available here")
        const mcp = yield* surface.dispatch(
          { id: "h2", name: "mcp__fx__tree_sum", args: { root: { value: 1 } } },
          ctx("h")
        )
        expect(mcp.status).toBe("error")
        const bash = yield* surface.dispatch(
          { id: "h3", name: "bash", args: { command: "cat notes.txt" } },
          { sessionId: "h", approve: () => Effect.succeed(true) }
        )
        expect(bash).toMatchObject({ tool: "bash", status: "ok" })
        expect(bash.modelOutput).toContain("beta")
      }),
    60_000
  )
})

describe("per-agent scoping", () => {
  it.live(
    "plan and read-only profiles hide mutating tools from the declared list, on every surface",
    () =>
      Effect.gen(function* () {
        const all = yield* system({ surface: "all" })
        const everything = names(yield* all.declared())
        expect(everything).toEqual(
          expect.arrayContaining(["bash", "edit", "write", "apply_patch", "mcp__fx__tree_sum"])
        )

        const plan = yield* all.withProfile("plan")
        const planned = names(yield* plan.declared())
        for (const hidden of ["bash", "edit", "write", "apply_patch", "mcp__fx__create_user"]) {
          expect(planned).not.toContain(hidden)
        }
        expect(planned).toEqual(expect.arrayContaining(["read", "grep", "glob", "mcp__fx__tree_sum"]))
        // Hidden, and still refused when called anyway.
        const edit = yield* plan.dispatch(
          { id: "p1", name: "write", args: { filePath: "x.txt", content: "x" } },
          { sessionId: "p", approve: () => Effect.succeed(true) }
        )
        expect(edit.status).toBe("denied")
        expect(NodeFs.existsSync(NodePath.join(root, "x.txt"))).toBe(false)

        const deferred = yield* system({ surface: "deferred" })
        const readOnly = yield* deferred.withProfile("read-only")
        expect(names(yield* readOnly.declared())).toEqual(["read", "tool_search", "tool_call"])
        const searchable = names(yield* readOnly.searchable)
        expect(searchable).not.toContain("edit")
        expect(searchable).toContain("grep")
        const search = yield* readOnly.dispatch(
          { id: "p2", name: "tool_search", args: { query: "select:edit,write" } },
          ctx("p")
        )
        expect(search.metadata.matches).toEqual([])

        const shell = yield* (yield* system({ surface: "shell" })).withProfile("read-only")
        expect(names(yield* shell.declared())).toEqual(["output"])
      }),
    90_000
  )
})

describe("ToolSystem layer with a surface", () => {
  it.live(
    "the system's Dispatcher is the surface: its declared list, its search, its refusals",
    () =>
      Effect.gen(function* () {
        const build = (surface: SurfaceOptions) =>
          Layer.build(
            toolSystem({
              root,
              outputConfig: OutputConfig.layerWith({}),
              config: { mcpServers: { fx } },
              surface
            }).pipe(Layer.provideMerge(NodeServices.layer))
          )
        const context = yield* build({ surface: "deferred", core: ["read"] })
        yield* Context.get(context, McpClients).ready
        const dispatcher = Context.get(context, Dispatcher)
        expect(names(yield* dispatcher.tools)).toEqual(["read", "tool_search", "tool_call"])
        expect(Option.getOrThrow(Context.getOption(context, ToolSurface)).surface).toBe("deferred")
        const found = yield* dispatcher.dispatch(
          { id: "l1", name: "tool_search", args: { query: "sum tree" } },
          ctx("l")
        )
        expect((found.metadata.matches as Array<string>)[0]).toBe("mcp__fx__tree_sum")
        const sum = yield* dispatcher.dispatch(
          { id: "l2", name: "tool_call", args: { name: "mcp__fx__tree_sum", arguments: { root: { value: 3 } } } },
          ctx("l")
        )
        expect(sum).toMatchObject({ tool: "mcp__fx__tree_sum", status: "ok", modelOutput: "3" })

        const shell = Context.get(yield* build({ surface: "shell" }), Dispatcher)
        expect(names(yield* shell.tools)).toEqual(["bash", "output"])
        const read = yield* shell.dispatch({ id: "l3", name: "read", args: { filePath: "notes.txt" } }, ctx("l"))
        expect(read.modelOutput).toContain("Only bash and output are available here")
      }).pipe(Effect.scoped),
    90_000
  )
})
