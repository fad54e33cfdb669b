/**
 * What a program can find is what its dispatcher reaches now: MCP servers connect after the
 * `code` tool is registered and their lists change mid-session, so the description's typed API,
 * `tools.search` and the MCP server's tools/list follow the registry; tools a rule hides are absent
 * from all three. A real MCP server (the fixture) over stdio.
 */
import * as NodeFs from "node:fs"
import { NodeServices } from "@effect/platform-node"
import { afterAll, describe, expect, it } from "@effect/vitest"
import { Context, Effect, Layer, Option } from "effect"
import type { FreecodeConfigData } from "../../layers/config.ts"
import { toolSystem } from "../../layers/system.ts"
import { Dispatcher } from "../../src/dispatch/dispatcher.ts"
import { McpClients } from "../../src/mcp/clients.ts"
import { OutputConfig } from "../../src/output/config.ts"
import { Approval } from "../../src/permission/approval.ts"
import { ToolRegistry } from "../../src/registry/registry.ts"
import { ToolSurface } from "../../src/surface/surface.ts"
import type { Tool } from "../../src/tool/tool.ts"
import { CODE_TOOL } from "../../src/tools/code.ts"
import { fixtureServer, withServedClient } from "../mcp/helpers.ts"
import { codeSystem, makeProject, runCode } from "./system.ts"

const root = makeProject({ "a.txt": "alpha\nbeta\n" })
afterAll(() => NodeFs.rmSync(root, { recursive: true, force: true }))

/** The code system with the fixture MCP server connecting in the background, as the CLI has it. */
const systemWithServer = (config: FreecodeConfigData = {}) =>
  Layer.build(
    McpClients.layer({ servers: { fx: fixtureServer() } }).pipe(
      Layer.provideMerge(
        toolSystem({
          root,
          config,
          outputConfig: OutputConfig.layerWith({}),
          code: { limits: { wallMs: 20_000 } },
          approval: Approval.layerApproveAll
        })
      ),
      Layer.provideMerge(NodeServices.layer)
    )
  )

type Ctx = Effect.Success<ReturnType<typeof systemWithServer>>

const description = (ctx: Ctx) =>
  Effect.map(Context.get(ctx, ToolRegistry).get(CODE_TOOL), (t) => (t._tag === "Some" ? t.value.description : ""))

/** Polls until `check` holds (a real server answers on its own time); bounded against a hang. */
const until = <A>(what: string, get: Effect.Effect<A>, check: (a: A) => boolean) =>
  Effect.gen(function* () {
    for (let i = 0; i < 300; i++) {
      const value = yield* get
      if (check(value)) return value
      yield* Effect.sleep("50 millis")
    }
    return yield* Effect.die(new Error(`timed out waiting for ${what}`))
  })

const searchNames = (ctx: Ctx, query: string) =>
  Effect.map(runCode(ctx, `return (await tools.search(${JSON.stringify(query)})).map((t) => t.name)`), (r) => {
    expect(r.status).toBe("ok")
    return JSON.parse(r.modelOutput.split("\n")[0]!) as Array<string>
  })

describe("code: discovery follows the dispatcher's current reach", () => {
  it.live(
    "MCP tools that connect after start, and one added mid-session, are in the description, tools.search and tools/list",
    () =>
      Effect.gen(function* () {
        const ctx = yield* systemWithServer()
        yield* Context.get(ctx, McpClients).ready
        // Connected after `code` was registered: listed with a signature from its schema.
        const first = yield* description(ctx)
        expect(first).toContain("mcp__fx__tree_sum(args:")
        expect(first).not.toContain("mcp__fx__late")

        // The server adds a tool and says so (list_changed): the description follows.
        const added = yield* runCode(ctx, `return (await tools.mcp__fx__add_tool({})).output`)
        expect(added.modelOutput).toContain("added")
        const after = yield* until("the late tool in the description", description(ctx), (d) =>
          d.includes("mcp__fx__late(")
        )
        expect(after).toContain("mcp__fx__tree_sum(args:")
        expect(yield* searchNames(ctx, "late")).toContain("mcp__fx__late")
        const late = yield* runCode(ctx, `return (await tools.mcp__fx__late({})).output`)
        expect(late.modelOutput).toContain("late tool works")

        // Over MCP: tools/list carries the same, current description.
        const listed = yield* Effect.provideContext(
          withServedClient((client) => Effect.promise(() => client.listTools())),
          ctx
        )
        const code = listed.tools.find((t) => t.name === CODE_TOOL)
        expect(code?.description).toContain("mcp__fx__late(")
      }),
    60_000
  )

  it.live(
    "a tool a rule hides is absent from the description and from tools.search, and refused by name",
    () =>
      Effect.gen(function* () {
        const ctx = yield* systemWithServer({ permissions: { deny: ["mcp__fx__late", "mcp__fx__tree_sum"] } })
        yield* Context.get(ctx, McpClients).ready
        yield* runCode(ctx, `await tools.mcp__fx__add_tool({})`)
        // Wait for the late tool to be registered (it is, hidden), then look.
        yield* until("the late tool registered", Context.get(ctx, ToolRegistry).tools, (ts) =>
          ts.some((t) => t.id === "mcp__fx__late")
        )
        const text = yield* description(ctx)
        expect(text).toContain("mcp__fx__add_tool(")
        expect(text).not.toContain("mcp__fx__late")
        expect(text).not.toContain("mcp__fx__tree_sum")
        expect(yield* searchNames(ctx, "late")).not.toContain("mcp__fx__late")
        const refused = yield* runCode(
          ctx,
          `try { await tools.call("mcp__fx__late", {}) } catch (e) { return e.status }`
        )
        expect(refused.modelOutput.split("\n")[0]).toBe("denied")
      }),
    60_000
  )
})

describe("code: a caller narrowed by a profile is told of what it reaches", () => {
  it.live("under read-only, the surface's and the dispatcher's code declarations leave out bash, edit and write", () =>
    Effect.gen(function* () {
      const ctx = yield* Layer.build(
        toolSystem({
          root,
          config: {},
          outputConfig: OutputConfig.layerWith({}),
          surface: { surface: "code" },
          approval: Approval.layerApproveAll
        }).pipe(Layer.provideMerge(NodeServices.layer))
      )
      const codeIn = (tools: ReadonlyArray<Tool>) => tools.find((t) => t.id === CODE_TOOL)!.description
      const surface = Option.getOrThrow(Context.getOption(ctx, ToolSurface))
      const wide = codeIn(yield* surface.declared())
      expect(wide).toContain("  bash(args:")
      expect(wide).toContain("  edit(args:")
      const narrow = codeIn(yield* (yield* Effect.orDie(surface.withProfile("read-only"))).declared())
      expect(narrow).toContain("  read(args:")
      expect(narrow).toContain("  grep(args:")
      for (const hidden of ["bash", "edit", "write", "apply_patch"]) expect(narrow).not.toContain(`  ${hidden}(args:`)
      const base = Context.get(ctx, Dispatcher)
      const sub = codeIn(yield* (yield* Effect.orDie(base.withProfile("read-only"))).tools)
      expect(sub).toContain("  read(args:")
      expect(sub).not.toContain("  bash(args:")
    })
  )
})

describe("code: a program's read is the program's", () => {
  it.live(
    "a program reading what the model read gets the text, never a pointer; a later read never points into a program",
    () =>
      Effect.gen(function* () {
        const ctx = yield* codeSystem(root)
        const d = Context.get(ctx, Dispatcher)
        const read = (id: string) => d.dispatch({ id, name: "read", args: { filePath: "a.txt" } }, { sessionId: "s" })
        expect((yield* read("model1")).modelOutput).toContain("beta")
        const r = yield* runCode(
          ctx,
          `const a = await tools.read({ filePath: "a.txt" }); const b = await tools.read({ filePath: "a.txt" }); return [a.output.includes("beta"), b.output.includes("beta")]`
        )
        expect(r.modelOutput.split("\n")[0]).toBe("[true,true]")
        const again = (yield* read("model2")).modelOutput
        expect(again).not.toContain(`${r.id}.`)
      })
  )
})
