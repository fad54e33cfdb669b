/** edit, write and apply_patch append the errors they introduce when FREECODE_LSP_DIAGNOSTICS_AFTER_EDIT is on. */
import { cpSync, symlinkSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Effect, Exit, FileSystem, Layer, Scope } from "effect"
import { testToolSystem } from "../../layers/test.ts"
import { trust } from "../../src/config/trust.ts"
import { Orchestrator } from "../../src/orchestrator/orchestrator.ts"
import { STATE_DIR_NAME } from "../../src/session/location.ts"
import { builtinTools } from "../../src/tools/index.ts"
import { nodeLayer } from "../fs/layers.ts"

const FIXTURE = new URL("../fixtures/lsp-project", import.meta.url).pathname
const NODE_MODULES = new URL("../../node_modules", import.meta.url).pathname

/** Runs two writes, an edit and a patch in a fixture copy, with the setting as given; returns their results. */
const writeTwice = (enabled: string) =>
  Effect.gen(function* () {
    const fs = yield* FileSystem.FileSystem
    const root = yield* fs.makeTempDirectoryScoped({ prefix: "freecode-after-edit-" })
    cpSync(FIXTURE, root, { recursive: true })
    symlinkSync(NODE_MODULES, join(root, "node_modules"))
    // Trusted: the project's own TypeScript server may start (test/lsp/trust.test.ts: when not).
    yield* trust(root).pipe(Effect.orDie)
    // The run's own state folder too, where the trust above was recorded.
    const env = ConfigProvider.layer(
      ConfigProvider.fromEnv({
        env: { FREECODE_LSP_DIAGNOSTICS_AFTER_EDIT: enabled, [STATE_DIR_NAME]: process.env[STATE_DIR_NAME] ?? "" }
      })
    )
    const scope = yield* Scope.make()
    const context = yield* Layer.buildWithScope(
      testToolSystem({ root, tools: builtinTools }).pipe(Layer.provide(env)),
      scope
    )
    const write = (id: string, filePath: string, content: string) =>
      Orchestrator.use((o) => o.execute({ id, name: "write", args: { filePath, content } }, { sessionId: "s" })).pipe(
        Effect.provide(context)
      )
    const call = (id: string, name: string, args: Record<string, unknown>) =>
      Orchestrator.use((o) => o.execute({ id, name, args }, { sessionId: "s" })).pipe(Effect.provide(context))
    const broken = yield* write("w1", "src/broken.ts", "export const n: number = 'not a number'\n")
    const clean = yield* write("w2", "src/clean.ts", "export const n: number = 1\n")
    // The server has seen both files now: edit and apply_patch report only what they break.
    const edited = yield* call("e1", "edit", {
      filePath: "src/broken.ts",
      oldString: "export const n",
      newString: "export const flag: boolean = 'yes'\nexport const n"
    })
    const patched = yield* call("p1", "apply_patch", {
      patchText: [
        "*** Begin Patch",
        "*** Update File: src/clean.ts",
        "@@",
        "-export const n: number = 1",
        "+export const n: number = null",
        "*** End Patch"
      ].join("\n")
    })
    yield* Scope.close(scope, Exit.void)
    return [broken, clean, edited, patched] as const
  }).pipe(Effect.provide(nodeLayer))

describe("errors after an edit", () => {
  it.live(
    "with the setting on, write, edit and apply_patch report the errors they introduce; a clean write adds nothing",
    () =>
      Effect.gen(function* () {
        const [broken, clean, edited, patched] = yield* writeTwice("true")
        expect(broken.status).toBe("ok")
        expect(broken.modelOutput).toContain("Errors in this file now:")
        expect(broken.modelOutput).toContain(
          "src/broken.ts:1:14: error TS2322: Type 'string' is not assignable to type 'number'."
        )
        expect(broken.metadata.filesWithErrors).toBe(1)
        expect(clean.modelOutput).not.toContain("Errors in this file now")
        expect(edited.status).toBe("ok")
        expect(edited.modelOutput).toContain(
          [
            "New errors in this file:",
            "src/broken.ts:1:14: error TS2322: Type 'string' is not assignable to type 'boolean'.",
            "(1 error that was there before is not shown.)"
          ].join("\n")
        )
        expect(edited.modelOutput).not.toContain("'number'")
        expect(patched.status).toBe("ok")
        expect(patched.modelOutput).toContain(
          "New errors in this file:\nsrc/clean.ts:1:14: error TS2322: Type 'null' is not assignable to type 'number'."
        )
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
