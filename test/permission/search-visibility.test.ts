/**
 * Searches hide what the rules hide from read: a file a deny rule names is not listed or searched
 * (grep, glob, ls), and a .env-like file's contents do not show in grep unless a person approved
 * the call. Through the real Dispatcher and the real search tools.
 */
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { afterAll, describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { Dispatcher } from "../../src/dispatch/dispatcher.ts"
import { PermissionEngine } from "../../src/permission/engine.ts"
import type { Tool } from "../../src/tool/tool.ts"
import { GlobTool } from "../../src/tools/glob.ts"
import { GrepTool } from "../../src/tools/grep.ts"
import { LsTool } from "../../src/tools/ls.ts"
import { makeRoot, system } from "../dispatch/helpers.ts"

const project = makeRoot()
afterAll(project.cleanup)
const { root } = project
for (const [rel, text] of Object.entries({
  "src/app.ts": "export const API_KEY = process.env.API_KEY\n",
  "secrets/key.txt": "API_KEY=sk-123\n",
  ".env": "TOKEN=abc\n",
  "notes.md": "TOKEN rotation is monthly\n"
})) {
  NodeFs.mkdirSync(NodePath.dirname(NodePath.join(root, rel)), { recursive: true })
  NodeFs.writeFileSync(NodePath.join(root, rel), text)
}

const tools = [GrepTool, GlobTool, LsTool]
const denySecrets = { permissions: { deny: ["Read(./secrets/**)"] } }
const dispatch = (name: string, args: Record<string, unknown>) =>
  Dispatcher.use((d) => d.dispatch({ id: `${name}-${Math.random()}`, name, args }, { sessionId: "s" }))

describe("searches show only what the caller may read", () => {
  it.live("a Read deny rule hides the file from grep, glob and ls", () =>
    Effect.gen(function* () {
      const grep = yield* dispatch("grep", { pattern: "API_KEY" })
      expect(grep.status).toBe("ok")
      expect(grep.modelOutput).toContain("src/app.ts:1:")
      expect(grep.modelOutput).not.toContain("sk-123")
      expect(grep.modelOutput).toContain("1 file with matches is not shown")
      const glob = yield* dispatch("glob", { pattern: "**/*" })
      expect(glob.modelOutput).toContain("src/app.ts")
      expect(glob.modelOutput).not.toContain("secrets/key.txt")
      const ls = yield* dispatch("ls", {})
      expect(ls.modelOutput).toContain("app.ts")
      expect(ls.modelOutput).not.toContain("key.txt")
    }).pipe(Effect.provide(system({ root, config: denySecrets, tools })))
  )

  it.live("the verdict tells secrets apart unless the search hides only denied files", () =>
    Effect.gen(function* () {
      const engine = yield* PermissionEngine
      const verdict = engine.searchable(GrepTool as Tool)
      expect(verdict(NodePath.join(root, ".env"))).toBe("secret")
      expect(verdict(NodePath.join(root, ".env"), false)).toBe("ok")
      expect(verdict(NodePath.join(root, "secrets/key.txt"), false)).toBe("denied")
      expect(verdict(NodePath.join(root, "notes.md"))).toBe("ok")
    }).pipe(Effect.provide(system({ root, config: denySecrets, tools })))
  )

  it.live(".env's contents stay out of grep by default; its name may show", () =>
    Effect.gen(function* () {
      const grep = yield* dispatch("grep", { pattern: "TOKEN" })
      expect(grep.modelOutput).toContain("notes.md:1:TOKEN rotation")
      expect(grep.modelOutput).not.toContain("TOKEN=abc")
      expect(grep.modelOutput).toContain("1 file with matches is not shown")
      const glob = yield* dispatch("glob", { pattern: "**/*" })
      expect(glob.modelOutput).toContain(".env")
    }).pipe(Effect.provide(system({ root, config: {}, tools })))
  )

  it.live("a person who approves a search of .env sees it; bypassPermissions shows it too", () =>
    Effect.gen(function* () {
      const approved = yield* dispatch("grep", { pattern: "TOKEN", path: ".env" })
      expect(approved.status).toBe("ok")
      expect(approved.modelOutput).toContain("TOKEN=abc")
    }).pipe(Effect.provide(system({ root, config: {}, tools, answer: { answer: "once" } })))
  )

  it.live("in bypassPermissions mode .env shows, but a deny rule still hides", () =>
    Effect.gen(function* () {
      const grep = yield* dispatch("grep", { pattern: "TOKEN|API_KEY" })
      expect(grep.modelOutput).toContain("TOKEN=abc")
      expect(grep.modelOutput).not.toContain("sk-123")
    }).pipe(
      Effect.provide(
        system({
          root,
          config: { permissions: { defaultMode: "bypassPermissions", deny: ["Read(./secrets/**)"] } },
          tools
        })
      )
    )
  )
})
