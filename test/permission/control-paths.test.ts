/**
 * Writes to control paths (src/sandbox/control-paths.ts) always ask: in every mode but
 * bypassPermissions, under allow rules that cover them, and however the path is spelled or
 * reached (links, case, `..`, a nested repository). The engine on real files, and the CLI's `run`
 * on a real project whose executable pre-commit hook an edit must not touch.
 */
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { afterAll, describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import type { FreecodeConfigData } from "../../layers/config.ts"
import { FreecodeConfig } from "../../src/config/load.ts"
import { controlPathAnywhere } from "../../src/permission/control.ts"
import { PermissionEngine } from "../../src/permission/engine.ts"
import type { Tool, ToolContext } from "../../src/tool/tool.ts"
import { Workspace } from "../../src/tool/workspace.ts"
import { ApplyPatchTool } from "../../src/tools/apply-patch.ts"
import { EditTool } from "../../src/tools/edit.ts"
import { ReadTool } from "../../src/tools/read.ts"
import { WriteTool } from "../../src/tools/write.ts"
import { jsonLines, runProcess } from "../cli/helpers.ts"
import { nodeLayer } from "../fs/layers.ts"

const base = NodeFs.realpathSync(NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "freecode-control-")))
const root = NodePath.join(base, "project")
for (const d of [".git/hooks", ".git/info", "src", "vendor/lib/.git/hooks", ".vscode"])
  NodeFs.mkdirSync(NodePath.join(root, d), { recursive: true })
NodeFs.writeFileSync(`${root}/.git/config`, "[core]\n")
NodeFs.writeFileSync(`${root}/.git/hooks/pre-commit`, "#!/bin/sh\nexit 0\n", { mode: 0o755 })
NodeFs.writeFileSync(`${root}/src/a.ts`, "x\n")
// Links inside the project that lead to control paths, one dangling (its target not made yet).
NodeFs.symlinkSync(`${root}/.git/config`, `${root}/src/innocent.txt`)
NodeFs.symlinkSync("../.git/hooks", `${root}/src/hooks`)
NodeFs.symlinkSync(`${root}/.git/hooks/post-checkout`, `${root}/src/dangling`)
afterAll(() => NodeFs.rmSync(base, { recursive: true, force: true }))

const engineWith = (config: FreecodeConfigData) =>
  PermissionEngine.layer.pipe(
    Layer.provide([FreecodeConfig.layerWith(config), Workspace.layer(root)]),
    Layer.provideMerge(nodeLayer)
  )
const ctx: ToolContext = { sessionId: "s1", callId: "c", root, canSeeImages: false, emit: () => Effect.void }

const decisions = (config: FreecodeConfigData, calls: ReadonlyArray<readonly [unknown, unknown]>) =>
  Effect.gen(function* () {
    const engine = yield* PermissionEngine
    const out = []
    for (const [tool, args] of calls) out.push(yield* engine.decide({ tool: tool as Tool, args, ctx }))
    return out
  }).pipe(Effect.provide(engineWith(config)))

const edit = (filePath: string) => [EditTool, { filePath, oldString: "x", newString: "y" }] as const
const write = (filePath: string) => [WriteTool, { filePath, content: "x" }] as const
const patch = (text: string) => [ApplyPatchTool, { patchText: `*** Begin Patch\n${text}\n*** End Patch` }] as const

/** Every way of naming a control path this test knows, each by a writing tool. */
const controlWrites = [
  edit(".git/hooks/pre-commit"),
  edit(`${root}/.git/hooks/pre-commit`),
  edit("./.git/../.git/hooks/pre-commit"),
  edit("src/../.git/config"),
  edit(".GIT/config"),
  edit(".Git/Hooks/pre-commit"),
  edit(".git./config"),
  edit(".g\u200cit/config"),
  edit("src/innocent.txt"),
  edit("src/hooks/pre-commit"),
  write("src/dangling"),
  write(".git/hooks/post-merge"),
  write(".git/info/attributes"),
  write(".gitattributes"),
  write("freecode.json"),
  write("FreeCode.json"),
  write(".mcp.json"),
  write(".vscode/tasks.json"),
  write(".envrc"),
  write("vendor/lib/.git/hooks/pre-commit"),
  write("vendor/lib/.gitattributes"),
  patch("*** Add File: .git/hooks/post-checkout\n+#!/bin/sh"),
  patch("*** Update File: src/a.ts\n*** Move to: .git/hooks/pre-push\n@@\n-x\n+y"),
  patch("*** Delete File: .git/config")
] as const

describe("control paths", () => {
  it("are found at any depth, without case, with what file systems drop from names", () => {
    expect(controlPathAnywhere(".git/hooks/pre-commit")).toBe(".git/hooks")
    expect(controlPathAnywhere("a/b/.git/config")).toBe(".git/config")
    expect(controlPathAnywhere(".GIT/CONFIG")).toBe(".git/config")
    expect(controlPathAnywhere(".git ./config")).toBe(".git/config")
    expect(controlPathAnywhere("\ufeff.git/config")).toBe(".git/config")
    expect(controlPathAnywhere(".git")).toBeDefined()
    expect(controlPathAnywhere("src/a.ts")).toBeUndefined()
    expect(controlPathAnywhere(".github/workflows/ci.yml")).toBeUndefined()
    expect(controlPathAnywhere("docs/git/config")).toBeUndefined()
    expect(controlPathAnywhere(".gitignore")).toBeUndefined()
  })

  it.live("a write asks in default and acceptEdits, under Edit(**) and Write(**), and names the path", () =>
    Effect.gen(function* () {
      for (const mode of ["default", "acceptEdits"] as const) {
        const config = { permissions: { defaultMode: mode, allow: ["Edit(**)", "Write(**)", "Edit", "Write"] } }
        const out = yield* decisions(config, controlWrites)
        out.forEach((d, i) => {
          expect(d.behavior, `${mode} ${JSON.stringify(controlWrites[i]![1])}`).toBe("ask")
          expect(d.reason).toContain("is a control path")
          // "Always" is not offered: nothing saves a standing approval for it.
          expect(d.grant).toBeUndefined()
        })
      }
    })
  )

  it.live("dontAsk refuses, bypassPermissions allows, a deny rule still refuses", () =>
    Effect.gen(function* () {
      const [dontAsk] = yield* decisions({ permissions: { defaultMode: "dontAsk", allow: ["Edit"] } }, [
        edit(".git/config")
      ])
      expect(dontAsk).toMatchObject({ behavior: "deny" })
      expect(dontAsk!.reason).toContain("control path")
      const bypass = yield* decisions({ permissions: { defaultMode: "bypassPermissions" } }, [edit(".git/config")])
      expect(bypass[0]!.behavior).toBe("allow")
      const denied = yield* decisions({ permissions: { defaultMode: "acceptEdits", deny: ["Edit(.git/**)"] } }, [
        edit(".git/config")
      ])
      expect(denied[0]!.behavior).toBe("deny")
    })
  )

  it.live("ordinary writes and reading a control path are unchanged", () =>
    Effect.gen(function* () {
      const out = yield* decisions({ permissions: { defaultMode: "acceptEdits" } }, [
        edit("src/a.ts"),
        write(".github/workflows/ci.yml"),
        write(".gitignore"),
        [ReadTool, { filePath: ".git/config" }],
        [ReadTool, { filePath: ".git/hooks/pre-commit" }]
      ])
      expect(out.map((d) => d.behavior)).toEqual(["allow", "allow", "allow", "allow", "allow"])
    })
  )
})

describe("the CLI, end to end", () => {
  const turn = (...calls: ReadonlyArray<{ id: string; name: string; args?: unknown }>) => JSON.stringify(calls)

  it.live("acceptEdits with Edit(**): an edit of an executable pre-commit hook is refused, the hook untouched", () =>
    Effect.gen(function* () {
      const project = NodeFs.mkdtempSync(NodePath.join(base, "cli-"))
      NodeFs.mkdirSync(`${project}/.git/hooks`, { recursive: true })
      const hook = `${project}/.git/hooks/pre-commit`
      NodeFs.writeFileSync(hook, "#!/bin/sh\nexit 0\n", { mode: 0o755 })
      NodeFs.writeFileSync(
        `${project}/freecode.json`,
        JSON.stringify({ permissions: { defaultMode: "acceptEdits", allow: ["Edit(**)", "Write(**)"] } })
      )
      const input = [
        turn({ id: "r", name: "read", args: { filePath: ".git/hooks/pre-commit" } }),
        turn({
          id: "e",
          name: "edit",
          args: { filePath: ".git/hooks/pre-commit", oldString: "exit 0", newString: "touch /tmp/pwned; exit 0" }
        }),
        turn({ id: "w", name: "write", args: { filePath: "freecode.json", content: '{"permissions":{}}' } })
      ]
      const r = yield* Effect.promise(() => runProcess(["run", "--root", project], `${input.join("\n")}\n`))
      const lines = jsonLines(r.stdout)
      expect(lines).toHaveLength(3)
      expect(lines[0]).toMatchObject({ id: "r", status: "ok" })
      for (const line of lines.slice(1)) {
        expect(line.status).toBe("denied")
        expect(line.modelOutput).toContain("is a control path")
        expect(line.modelOutput).toContain("No one is available to approve it here")
      }
      expect(NodeFs.readFileSync(hook, "utf8")).toBe("#!/bin/sh\nexit 0\n")
      expect(NodeFs.statSync(hook).mode & 0o777).toBe(0o755)
      expect(NodeFs.readFileSync(`${project}/freecode.json`, "utf8")).toContain("acceptEdits")
    })
  )
})
