import { describe, expect, it } from "@effect/vitest"
import { Context, Effect, Exit, Fiber, Option, Schema, Scope, Stream } from "effect"
import { toolsParam } from "../../src/registry/provider.ts"
import { type RegistryChange, ToolRegistry } from "../../src/registry/registry.ts"
import { defineTool, type Tool, type ToolSource } from "../../src/tool/tool.ts"

const tool = (id: string, source: ToolSource = "builtin"): Tool =>
  defineTool({
    id,
    source,
    description: `The ${id} tool.`,
    parameters: Schema.Struct({ value: Schema.String.annotate({ description: "A value." }) }),
    execute: ({ value }) => Effect.succeed({ title: id, output: value })
  })

const GreetingService = Context.Service<{ readonly text: string }>("test/Greeting")

const withRegistry = <A, E>(body: (registry: ToolRegistry["Service"]) => Effect.Effect<A, E>) =>
  ToolRegistry.use(body).pipe(Effect.provide(ToolRegistry.layer))

describe("ToolRegistry", () => {
  it.effect("keeps a stable order: fixed tools by name, then runtime (MCP) tools by name", () =>
    withRegistry((registry) =>
      Effect.gen(function* () {
        for (const t of [
          tool("mcp__gh__issue", "mcp"),
          tool("read"),
          tool("bash"),
          tool("mcp__a__x", "mcp"),
          tool("glob")
        ]) {
          yield* registry.register(t)
        }
        expect((yield* registry.tools).map((t) => t.id)).toEqual([
          "bash",
          "glob",
          "read",
          "mcp__a__x",
          "mcp__gh__issue"
        ])
      })
    )
  )

  it.effect("refuses a second tool with the same id", () =>
    withRegistry((registry) =>
      Effect.gen(function* () {
        yield* registry.register(tool("read"))
        const error = yield* Effect.flip(registry.register(tool("read")))
        expect(error._tag).toBe("DuplicateTool")
      })
    )
  )

  it.effect("resolves exact names, repairs wrong case, and suggests close names", () =>
    withRegistry((registry) =>
      Effect.gen(function* () {
        for (const id of ["read", "grep", "glob", "write"]) yield* registry.register(tool(id))
        expect((yield* registry.resolve("read")).id).toBe("read")
        expect((yield* registry.resolve("Grep")).id).toBe("grep")
        const unknown = yield* Effect.flip(registry.resolve("gerp"))
        expect(unknown.suggestions).toContain("grep")
        expect(unknown.message).toMatch(/^No tool named "gerp"\. Did you mean "grep"/)
        const nothingClose = yield* Effect.flip(registry.resolve("launch_rocket"))
        expect(nothingClose.suggestions).toEqual([])
        expect(nothingClose.message).toBe('No tool named "launch_rocket". Available tools: glob, grep, read, write.')
      })
    )
  )

  it.effect("caches definitions until the set changes, and announces every change", () =>
    withRegistry((registry) =>
      Effect.gen(function* () {
        const seen: Array<RegistryChange> = []
        const fiber = yield* Effect.forkChild(
          Stream.runForEach(registry.changes, (c) => Effect.sync(() => seen.push(c)))
        )
        yield* Effect.yieldNow
        yield* registry.register(tool("read"))
        const first = yield* registry.definitions
        expect(yield* registry.definitions).toBe(first)
        const anthropic = yield* registry.toolsParam("anthropic")
        expect(yield* registry.toolsParam("anthropic")).toBe(anthropic)
        yield* registry.register(tool("grep"))
        const second = yield* registry.definitions
        expect(second).not.toBe(first)
        expect(second.map((d) => d.name)).toEqual(["grep", "read"])
        expect(yield* registry.toolsParam("anthropic")).not.toBe(anthropic)
        expect(yield* registry.unregister("read")).toBe(true)
        expect(yield* registry.unregister("read")).toBe(false)
        expect((yield* registry.definitions).map((d) => d.name)).toEqual(["grep"])
        yield* Effect.yieldNow
        yield* Fiber.interrupt(fiber)
        expect(seen.map((c) => [c.type, c.id, c.version])).toEqual([
          ["registered", "read", 1],
          ["registered", "grep", 2],
          ["unregistered", "read", 3]
        ])
      })
    )
  )

  it.effect("a scoped registration goes away when its scope closes", () =>
    withRegistry((registry) =>
      Effect.gen(function* () {
        const scope = yield* Scope.make()
        yield* registry.registerScoped(tool("mcp__srv__t", "mcp")).pipe(Scope.provide(scope))
        expect(Option.isSome(yield* registry.get("mcp__srv__t"))).toBe(true)
        yield* Scope.close(scope, Exit.void)
        expect(Option.isNone(yield* registry.get("mcp__srv__t"))).toBe(true)
      })
    )
  )

  it.effect("builds each provider's tools parameter, with Anthropic's cache breakpoint on the last tool only", () =>
    withRegistry((registry) =>
      Effect.gen(function* () {
        yield* registry.register(tool("read"))
        yield* registry.register(tool("grep"))
        const schema = {
          type: "object",
          properties: { value: { type: "string", description: "A value." } },
          required: ["value"],
          additionalProperties: false
        }
        expect(yield* registry.toolsParam("anthropic")).toEqual([
          { name: "grep", description: "The grep tool.", input_schema: schema },
          { name: "read", description: "The read tool.", input_schema: schema, cache_control: { type: "ephemeral" } }
        ])
        expect((yield* registry.toolsParam("openai"))[0]).toEqual({
          type: "function",
          function: { name: "grep", description: "The grep tool.", parameters: schema }
        })
        expect((yield* registry.toolsParam("openai-responses"))[1]).toEqual({
          type: "function",
          name: "read",
          description: "The read tool.",
          parameters: schema
        })
        const { additionalProperties: _, ...gemini } = schema
        expect(yield* registry.toolsParam("gemini")).toEqual([
          {
            functionDeclarations: [
              { name: "grep", description: "The grep tool.", parameters: gemini },
              { name: "read", description: "The read tool.", parameters: gemini }
            ]
          }
        ])
      })
    )
  )

  it("Gemini's parameters know only anyOf: oneOf is lowered, property names are kept", () => {
    const [entry] = toolsParam("gemini", [
      {
        name: "pick",
        description: "Picks.",
        inputSchema: {
          type: "object",
          additionalProperties: false,
          properties: {
            oneOf: { type: "string" },
            target: { oneOf: [{ type: "string" }, { type: "number" }] }
          }
        }
      }
    ]) as [{ functionDeclarations: [{ parameters: unknown }] }]
    expect(entry.functionDeclarations[0].parameters).toEqual({
      type: "object",
      properties: { oneOf: { type: "string" }, target: { anyOf: [{ type: "string" }, { type: "number" }] } }
    })
  })

  it.effect("a registered tool carries the requirements it was registered with", () =>
    Effect.gen(function* () {
      const needs = defineTool({
        id: "greet",
        description: "Greets.",
        parameters: Schema.Struct({}),
        execute: () => GreetingService.use((g) => Effect.succeed({ title: "greet", output: g.text }))
      })
      const registry = yield* ToolRegistry
      yield* registry.register(needs).pipe(Effect.provideService(GreetingService, { text: "hello" }))
      const registered = Option.getOrThrow(yield* registry.get("greet"))
      const out = yield* registered.execute(
        {},
        { sessionId: "s", callId: "c", root: "/", canSeeImages: false, emit: () => Effect.void }
      )
      expect(out.output).toBe("hello")
    }).pipe(Effect.provide(ToolRegistry.layer))
  )
})
