import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Result, Schema } from "effect"
import {
  InvalidArguments,
  PermissionDenied,
  ToolFailure,
  ToolInterrupted,
  ToolTimeout,
  TransientFailure,
  UnknownTool
} from "../../src/tool/errors.ts"
import { defineTool, type ToolContext } from "../../src/tool/tool.ts"

const ctx: ToolContext = { sessionId: "s", callId: "c", root: "/proj", canSeeImages: false, emit: () => Effect.void }

const minimal = defineTool({
  id: "minimal",
  description: "Declares only what is required.",
  parameters: Schema.Struct({ n: Schema.Int.annotate({ description: "A number." }) }),
  execute: ({ n }) => Effect.succeed({ title: "minimal", output: String(n) })
})

describe("defineTool", () => {
  it("fills fail-closed defaults: sequential, non-mutating, never rerun, not cancellable, head+tail cut", () => {
    expect(minimal).toMatchObject({
      id: "minimal",
      source: "builtin",
      concurrencySafe: false,
      mutates: false,
      retrySafe: false,
      interruptBehavior: "block",
      maxResultSizeChars: undefined,
      truncate: "both",
      operations: [],
      requiresApproval: false,
      validateInput: undefined,
      checkPermissions: undefined
    })
    expect(minimal.outputKind).toBeUndefined()
    expect(minimal.paths({ n: 1 }, ctx)).toEqual([])
    expect(Duration.toMillis(Duration.fromInputUnsafe(minimal.timeout({ n: 1 })))).toBe(120_000)
  })

  it("keeps every declared field, and passes decoded arguments to the functions that read them", () => {
    const declared = defineTool({
      id: "full",
      description: "Declares everything.",
      parameters: Schema.Struct({ path: Schema.String, wait: Schema.Int }),
      source: "mcp",
      concurrencySafe: true,
      mutates: true,
      retrySafe: true,
      interruptBehavior: "cancel",
      timeout: ({ wait }) => Duration.millis(wait),
      maxResultSizeChars: 1234,
      truncate: "tail",
      outputKind: () => "log",
      permissions: { operations: ["file.write"], requiresApproval: true },
      paths: ({ path }, c) => [`${c.root}/${path}`],
      validateInput: () => Effect.void,
      checkPermissions: () => Effect.succeed({ behavior: "ask" as const }),
      execute: ({ path }) => Effect.succeed({ title: path, output: path })
    })
    expect(declared).toMatchObject({
      source: "mcp",
      concurrencySafe: true,
      mutates: true,
      retrySafe: true,
      interruptBehavior: "cancel",
      maxResultSizeChars: 1234,
      truncate: "tail",
      operations: ["file.write"],
      requiresApproval: true
    })
    const args = { path: "a.txt", wait: 250 }
    expect(Duration.toMillis(Duration.fromInputUnsafe(declared.timeout(args)))).toBe(250)
    expect(declared.outputKind?.(args)).toBe("log")
    expect(declared.paths(args, ctx)).toEqual(["/proj/a.txt"])
    expect(typeof declared.validateInput).toBe("function")
    expect(typeof declared.checkPermissions).toBe("function")
  })

  it("derives the JSON Schema once, with every property typed and described", () => {
    expect(minimal.inputSchema).toBe(minimal.inputSchema)
    expect(minimal.inputSchema).toMatchObject({
      type: "object",
      properties: { n: { type: "integer", description: "A number." } },
      required: ["n"]
    })
  })

  it("decodes with every failing path reported, and refuses unknown properties", () => {
    const bad = minimal.decode({ n: "x", extra: 1 })
    expect(Result.isFailure(bad)).toBe(true)
    if (Result.isFailure(bad)) {
      expect(bad.failure).toBeInstanceOf(InvalidArguments)
      expect(bad.failure.issues.map((i) => i.path).sort()).toEqual(["extra", "n"])
    }
    expect(Result.isSuccess(minimal.decode({ n: 3 }))).toBe(true)
  })
})

describe("typed errors", () => {
  it("are Schema.TaggedErrors with the tags the orchestrator maps to statuses", () => {
    const errors = [
      new UnknownTool({ name: "x", suggestions: [], message: "m" }),
      new InvalidArguments({ tool: "t", issues: [], message: "m" }),
      new PermissionDenied({ tool: "t", message: "m" }),
      new ToolTimeout({ tool: "t", timeoutMs: 1, partialOutput: "", message: "m" }),
      new ToolInterrupted({ tool: "t", partialOutput: "", message: "m" }),
      new TransientFailure({ message: "m" }),
      new ToolFailure({ message: "m" })
    ]
    expect(errors.map((e) => e._tag)).toEqual([
      "UnknownTool",
      "InvalidArguments",
      "PermissionDenied",
      "ToolTimeout",
      "ToolInterrupted",
      "TransientFailure",
      "ToolFailure"
    ])
    for (const e of errors) {
      expect(e).toBeInstanceOf(Error)
      expect(e.message).toBe("m")
    }
  })
})
