/** edit, write and apply_patch append the file's errors when FREECODE_LSP_DIAGNOSTICS_AFTER_EDIT is on. */
import { cpSync, symlinkSync } from "node:fs"
import { join } from "node:path"
import { NodeServices } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Effect, Exit, FileSystem, Layer, Scope } from "effect"
import { testToolSystem } from "../../layers/test.ts"
import { Orchestrator } from "../../src/orchestrator/orchestrator.ts"
import { builtinTools } from "../../src/tools/index.ts"

const FIXTURE = new URL("../fixtures/lsp-project", import.meta.url).pathname
const NODE_MODULES = new URL("../../node_modules", import.meta.url).pathname

/** Runs two writes in a fixture copy, with the setting as given; returns their model outputs. */
const writeTwice = (enabled: string) =>
  Effect.gen(function* () {
    const fs = yield* FileSystem.FileSystem
    const root = yield* fs.makeTempDirectoryScoped({ prefix: "freecode-after-edit-" })
    cpSync(FIXTURE, root, { recursive: true })
    symlinkSync(NODE_MODULES, join(root, "node_modules"))
    const env = ConfigProvider.layer(ConfigProvider.fromEnv({ env: { FREECODE_LSP_DIAGNOSTICS_AFTER_EDIT: enabled } }))
    const scope = yield* Scope.make()
    const context = yield* Layer.buildWithScope(
      testToolSystem({ root, tools: builtinTools }).pipe(Layer.provide(env)),
      scope
    )
    const write = (id: string, filePath: string, content: string) =>
      Orchestrator.use((o) => o.execute({ id, name: "write", args: { filePath, content } }, { sessionId: "s" })).pipe(
        Effect.provide(context)
      )
    const broken = yield* write("w1", "src/broken.ts", "export const n: number = 'not a number'\n")
    const clean = yield* write("w2", "src/clean.ts", "export const n: number = 1\n")
    yield* Scope.close(scope, Exit.void)
    return [broken, clean] as const
  }).pipe(Effect.provide(NodeServices.layer))

describe("errors after an edit", () => {
  it.live(
    "with the setting on, a write that breaks the file says so; a clean write adds nothing",
    () =>
      Effect.gen(function* () {
        const [broken, clean] = yield* writeTwice("true")
        expect(broken.status).toBe("ok")
        expect(broken.modelOutput).toContain("Errors in this file now:")
        expect(broken.modelOutput).toContain(
          "src/broken.ts:1:14: error TS2322: Type 'string' is not assignable to type 'number'."
        )
        expect(broken.metadata.filesWithErrors).toBe(1)
        expect(clean.modelOutput).not.toContain("Errors in this file now")
      }),
    120_000
  )

  it.live("off by default: no language server is asked", () =>
    Effect.gen(function* () {
      const [broken] = yield* writeTwice("false")
      expect(broken.status).toBe("ok")
      expect(broken.modelOutput).not.toContain("Errors in this file now")
      expect(broken.metadata.filesWithErrors).toBeUndefined()
    })
  )
})
