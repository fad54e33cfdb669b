/** A tool system for dispatcher and hook tests: real files in a temp project, small test tools. */
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { NodeServices } from "@effect/platform-node"
import { Effect, FileSystem, Layer, Schema } from "effect"
import type { FreecodeConfigData } from "../../layers/config.ts"
import { toolSystem } from "../../layers/system.ts"
import type { FunctionHook } from "../../src/hooks/hooks.ts"
import { OutputConfig, type OutputSettings } from "../../src/output/config.ts"
import { resolvePath } from "../../src/path/path.ts"
import { Approval, type ApprovalAnswer, type ApprovalQuestion } from "../../src/permission/approval.ts"
import { fail } from "../../src/tool/errors.ts"
import { defineTool, type Tool } from "../../src/tool/tool.ts"
import type { BuiltinRequirements } from "../../src/tools/index.ts"

export const makeRoot = () => {
  const root = NodeFs.realpathSync(NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "freecode-dispatch-")))
  return { root, cleanup: () => NodeFs.rmSync(root, { recursive: true, force: true }) }
}

/** Writes a file: a mutating tool whose effect a test can see on disk. */
export const Touch = defineTool({
  id: "touch",
  description: "Create a file.",
  parameters: Schema.Struct({ filePath: Schema.String, text: Schema.optionalKey(Schema.String) }),
  mutates: true,
  permissions: { operations: ["file.write"] },
  paths: ({ filePath }, ctx) => [resolvePath(ctx.root, filePath)],
  execute: ({ filePath, text }, ctx) =>
    Effect.gen(function* () {
      const fs = yield* FileSystem.FileSystem
      yield* fs
        .writeFileString(resolvePath(ctx.root, filePath), text ?? "touched")
        .pipe(Effect.mapError((e) => fail(e.message)))
      return { title: `touch ${filePath}`, output: `wrote ${filePath}` }
    })
})

/** Read-only and concurrency-safe; records how many run at once. */
export const concurrency = { now: 0, max: 0 }
export const Look = defineTool({
  id: "look",
  description: "Look.",
  parameters: Schema.Struct({ n: Schema.Int }),
  concurrencySafe: true,
  execute: ({ n }) =>
    Effect.gen(function* () {
      concurrency.now++
      concurrency.max = Math.max(concurrency.max, concurrency.now)
      yield* Effect.sleep("60 millis")
      concurrency.now--
      return { title: "look", output: `looked ${n}` }
    })
})

/** Asks for approval on every call. */
export const Guarded = defineTool({
  id: "guarded",
  description: "Asks before it runs.",
  parameters: Schema.Struct({}),
  mutates: true,
  permissions: { operations: ["session.write"], requiresApproval: true },
  execute: () => Effect.succeed({ title: "guarded", output: "did the guarded thing" })
})

/** Read-only, but its own check asks when told to. */
export const Careful = defineTool({
  id: "careful",
  description: "Reads, but asks about 'risky'.",
  parameters: Schema.Struct({ what: Schema.String }),
  checkPermissions: ({ what }) =>
    Effect.succeed(
      what === "risky"
        ? { behavior: "ask" as const, reason: "careful: risky needs a person." }
        : { behavior: "allow" as const }
    ),
  execute: ({ what }) => Effect.succeed({ title: "careful", output: `did ${what}` })
})

export const testTools: ReadonlyArray<Tool<BuiltinRequirements>> = [Touch, Look, Guarded, Careful]

export const system = (options: {
  readonly root: string
  readonly config?: FreecodeConfigData
  readonly answer?: ApprovalAnswer | ((q: ApprovalQuestion) => ApprovalAnswer)
  readonly asked?: Array<ApprovalQuestion>
  readonly hooks?: ReadonlyArray<FunctionHook>
  readonly tools?: ReadonlyArray<Tool<BuiltinRequirements>>
  readonly output?: Partial<OutputSettings>
}) =>
  toolSystem({
    root: options.root,
    outputConfig: OutputConfig.layerWith(options.output ?? {}),
    tools: options.tools ?? testTools,
    config: options.config ?? {},
    ...(options.answer === undefined ? {} : { approval: Approval.layerTest(options.answer, options.asked ?? []) }),
    ...(options.hooks === undefined ? {} : { hooks: options.hooks })
  }).pipe(Layer.provideMerge(NodeServices.layer))
