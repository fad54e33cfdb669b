import { describe, expect, it } from "@effect/vitest"
import { Effect, FileSystem, Layer } from "effect"
import { testToolSystem } from "../../layers/test.ts"
import type { ToolEvents } from "../../src/events/events.ts"
import { Orchestrator } from "../../src/orchestrator/orchestrator.ts"
import { joinPath } from "../../src/path/path.ts"
import { ToolRegistry } from "../../src/registry/registry.ts"
import { layer, project, readText } from "./helpers.ts"

/** The whole system, as a model drives it: registered tools, one execution path, real files. */
const withSystem = <A, E>(root: string, body: Effect.Effect<A, E, Orchestrator | ToolRegistry | ToolEvents>) =>
  Effect.scoped(
    Effect.gen(function* () {
      const context = yield* Layer.build(testToolSystem({ root }))
      return yield* body.pipe(Effect.provide(context))
    })
  )

let n = 0
const call = (name: string, args: unknown, sessionId = "sys") =>
  Orchestrator.use((o) => o.execute({ id: `c${++n}`, name, args }, { sessionId }))

describe("edit, write and apply_patch in the tool system", () => {
  it.live("are registered and run through the orchestrator; read, edit and write share the session's ReadState", () =>
    Effect.gen(function* () {
      const root = yield* project({ "src/a.ts": "export const a = 1\n" })
      yield* withSystem(
        root,
        Effect.gen(function* () {
          const registry = yield* ToolRegistry
          const names = (yield* registry.tools).map((t) => t.id)
          expect(names).toEqual(expect.arrayContaining(["edit", "write", "apply_patch"]))

          const refused = yield* call("write", { filePath: "src/a.ts", content: "x\n" })
          expect(refused.status).toBe("error")
          expect(refused.modelOutput).toContain("has not been read in this session")

          const read = yield* call("read", { filePath: "src/a.ts" })
          expect(read.modelOutput).toBe("1\texport const a = 1")
          const again = yield* call("read", { filePath: "src/a.ts" })
          expect(again.modelOutput).toContain("<unchanged>")

          const edit = yield* call("edit", { filePath: "src/a.ts", oldString: "a = 1", newString: "a = 2" })
          expect(edit.status).toBe("ok")
          expect(edit.metadata).toMatchObject({ replacer: "simple" })
          const afterEdit = yield* call("read", { filePath: "src/a.ts" })
          expect(afterEdit.modelOutput).toBe("1\texport const a = 2")

          const write = yield* call("write", { filePath: "src/a.ts", content: "export const a = 3\n" })
          expect(write.status).toBe("ok")
          const patch = yield* call("apply_patch", {
            patchText:
              "*** Begin Patch\n*** Update File: src/a.ts\n@@\n-export const a = 3\n+export const a = 4\n*** End Patch"
          })
          expect(patch.status).toBe("ok")
        })
      )
      expect(yield* readText(joinPath(root, "src/a.ts"))).toBe("export const a = 4\n")
      const fs = yield* FileSystem.FileSystem
      expect(yield* fs.readDirectory(joinPath(root, "src"))).toEqual(["a.ts"])
    }).pipe(Effect.provide(layer))
  )
})
