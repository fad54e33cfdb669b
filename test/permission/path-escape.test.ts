/**
 * Path escapes through the Dispatcher with the real read, write and edit tools: `../`, absolute
 * paths and symlinks out of the root are refused (non-interactively) and nothing outside changes.
 * acceptEdits is on, so the same edits inside the project do run.
 */
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { afterAll, describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { Dispatcher } from "../../src/dispatch/dispatcher.ts"
import { EditTool } from "../../src/tools/edit.ts"
import { ReadTool } from "../../src/tools/read.ts"
import { WriteTool } from "../../src/tools/write.ts"
import { system } from "../dispatch/helpers.ts"

const base = NodeFs.realpathSync(NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "freecode-escape-")))
const root = `${base}/project`
const outside = `${base}/outside`
NodeFs.mkdirSync(root)
NodeFs.mkdirSync(outside)
NodeFs.writeFileSync(`${outside}/secret.txt`, "outside original\n")
NodeFs.writeFileSync(`${root}/inside.txt`, "inside original\n")
NodeFs.symlinkSync(outside, `${root}/out-dir`)
NodeFs.symlinkSync(`${outside}/secret.txt`, `${root}/out-file`)
afterAll(() => NodeFs.rmSync(base, { recursive: true, force: true }))

const escapes = ["../outside/secret.txt", `${outside}/secret.txt`, "out-dir/secret.txt", "out-file"]
const tools = [ReadTool, WriteTool, EditTool]

describe("path escapes through the Dispatcher", () => {
  it.live("read, write and edit outside the root are refused; the outside file is untouched", () =>
    Effect.gen(function* () {
      const d = yield* Dispatcher
      let n = 0
      for (const filePath of escapes) {
        const calls = [
          { name: "read", args: { filePath } },
          { name: "write", args: { filePath, content: "pwned\n" } },
          { name: "edit", args: { filePath, oldString: "original", newString: "pwned" } }
        ]
        for (const call of calls) {
          const r = yield* d.dispatch({ id: `e${n++}`, ...call }, { sessionId: "s" })
          expect([call.name, filePath, r.status]).toEqual([call.name, filePath, "denied"])
          expect(r.modelOutput).toContain("outside the project")
        }
      }
      const w = yield* d.dispatch(
        { id: "new", name: "write", args: { filePath: "../outside/new.txt", content: "x" } },
        { sessionId: "s" }
      )
      expect(w.status).toBe("denied")
      expect(NodeFs.existsSync(`${outside}/new.txt`)).toBe(false)
      expect(NodeFs.readFileSync(`${outside}/secret.txt`, "utf8")).toBe("outside original\n")
    }).pipe(Effect.provide(system({ root, tools, config: { permissions: { defaultMode: "acceptEdits" } } })))
  )

  it.live("the same edits inside the project run (acceptEdits)", () =>
    Effect.gen(function* () {
      const d = yield* Dispatcher
      const read = yield* d.dispatch({ id: "i1", name: "read", args: { filePath: "inside.txt" } }, { sessionId: "s" })
      expect(read.status).toBe("ok")
      const edit = yield* d.dispatch(
        { id: "i2", name: "edit", args: { filePath: "inside.txt", oldString: "original", newString: "edited" } },
        { sessionId: "s" }
      )
      expect(edit.status).toBe("ok")
      expect(edit.metadata.permission).toMatchObject({ behavior: "allow", by: "mode" })
      expect(NodeFs.readFileSync(`${root}/inside.txt`, "utf8")).toBe("inside edited\n")
    }).pipe(Effect.provide(system({ root, tools, config: { permissions: { defaultMode: "acceptEdits" } } })))
  )
})
