/**
 * A language server from the project's own files starts only in a folder the person trusts: its
 * node_modules/.bin, a node_modules above it, a PATH entry inside it. Each planted server is a
 * real script that leaves a marker file when it runs; in an untrusted folder no marker may appear
 * and the lsp tool says why, naming `freecode-tools trust`. Trusted, the same script runs.
 */
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Layer, Scope } from "effect"
import { testToolSystem } from "../../layers/test.ts"
import { forget, trust } from "../../src/config/trust.ts"
import { LocalFs } from "../../src/fs/local-fs.ts"
import { onPath } from "../../src/lsp/place.ts"
import { SERVERS } from "../../src/lsp/servers.ts"
import { Orchestrator } from "../../src/orchestrator/orchestrator.ts"
import type { ToolResult } from "../../src/tool/result.ts"
import { LspTool } from "../../src/tools/lsp.ts"

/** A folder with a TypeScript file and a "language server" that only leaves `marker` behind. */
const plant = (at: string, marker: string, binary = "typescript-language-server") => {
  NodeFs.mkdirSync(NodePath.join(at, "node_modules", ".bin"), { recursive: true })
  const script = NodePath.join(at, "node_modules", ".bin", binary)
  NodeFs.writeFileSync(script, `#!/bin/sh\necho ran >> ${JSON.stringify(marker)}\nexit 1\n`, { mode: 0o755 })
  return script
}

const tempDir = (prefix: string) => NodeFs.realpathSync(NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), prefix)))

/** One lsp call on `file` in a tool system for `root`, closed (with any server) at the end. */
const lspCall = (root: string, file: string): Effect.Effect<ToolResult> =>
  Effect.gen(function* () {
    const scope = yield* Scope.make()
    const context = yield* Layer.buildWithScope(testToolSystem({ root, tools: [LspTool] }), scope).pipe(Effect.orDie)
    const result = yield* Orchestrator.use((o) =>
      o.execute({ id: "l", name: "lsp", args: { operation: "documentSymbol", filePath: file } }, { sessionId: "s" })
    ).pipe(Effect.provide(context))
    yield* Scope.close(scope, Exit.void)
    return result
  })

describe("language servers and trust", () => {
  it.live("the project's node_modules/.bin server: not in an untrusted folder (and says why), run once trusted", () =>
    Effect.gen(function* () {
      const root = tempDir("freecode-lsp-trust-")
      const marker = NodePath.join(tempDir("freecode-lsp-marker-"), "ran")
      plant(root, marker)
      NodeFs.writeFileSync(NodePath.join(root, "a.ts"), "export const a = 1\n")

      const refused = yield* lspCall(root, "a.ts")
      expect(refused.status).toBe("error")
      expect(refused.modelOutput).toContain(`${root} is not trusted`)
      expect(refused.modelOutput).toContain(`freecode-tools trust ${root}`)
      expect(NodeFs.existsSync(marker)).toBe(false)

      yield* trust(root).pipe(Effect.orDie)
      const ran = yield* lspCall(root, "a.ts")
      expect(ran.modelOutput).toContain("failed to start")
      expect(NodeFs.readFileSync(marker, "utf8")).toContain("ran")
      yield* forget(root).pipe(Effect.orDie)
    })
  )

  it.live("a node_modules above the root, and a server on PATH when the workspace has its own TypeScript", () =>
    Effect.gen(function* () {
      const above = tempDir("freecode-lsp-above-")
      const marker = NodePath.join(tempDir("freecode-lsp-marker-"), "ran")
      plant(above, marker, "tsc")
      plant(above, marker)
      NodeFs.mkdirSync(NodePath.join(above, "node_modules", "typescript"))
      NodeFs.writeFileSync(NodePath.join(above, "node_modules", "typescript", "package.json"), '{"version":"7.0.0"}')
      const root = NodePath.join(above, "project")
      NodeFs.mkdirSync(root)
      NodeFs.writeFileSync(NodePath.join(root, "a.ts"), "export const a = 1\n")
      const refused = yield* lspCall(root, "a.ts")
      expect(refused.modelOutput).toContain("is not trusted")
      expect(NodeFs.existsSync(marker)).toBe(false)

      // Trusted, a node_modules above the root is used only when this user (or root) owns it:
      // not one another user planted in a shared folder.
      if (process.getuid?.() === 0) {
        NodeFs.chownSync(NodePath.join(above, "node_modules"), 65534, 65534)
        yield* trust(root).pipe(Effect.orDie)
        const planted = yield* lspCall(root, "a.ts")
        expect(planted.status).toBe("error")
        expect(NodeFs.existsSync(marker)).toBe(false)
        NodeFs.chownSync(NodePath.join(above, "node_modules"), 0, 0)
        const owned = yield* lspCall(root, "a.ts")
        expect(owned.modelOutput).toContain("failed to start")
        expect(NodeFs.existsSync(marker)).toBe(true)
        yield* forget(root).pipe(Effect.orDie)
      }
    })
  )

  it.live("a PATH entry inside the project, relative or in a node_modules is not used in an untrusted folder", () =>
    Effect.gen(function* () {
      const root = tempDir("freecode-lsp-path-")
      const marker = NodePath.join(root, "ran")
      const script = plant(root, marker, "gopls")
      const bin = NodePath.dirname(script)
      const saved = process.env.PATH
      const cwd = process.cwd()
      try {
        for (const entry of [
          bin,
          "node_modules/.bin",
          NodePath.join(root, "node_modules", "..", "node_modules", ".bin")
        ]) {
          process.env.PATH = [entry, saved].join(NodePath.delimiter)
          process.chdir(root)
          expect(yield* onPath("gopls", { projectRoot: root, trusted: false }), entry).toBeUndefined()
          // Trusted, the project's own program is found, named absolutely (what is checked is what starts).
          expect(yield* onPath("gopls", { projectRoot: root, trusted: true }), entry).toBe(script)
        }
        // A link elsewhere that leads into the project's node_modules is the project's too.
        const link = NodePath.join(tempDir("freecode-lsp-link-"), "bin")
        NodeFs.symlinkSync(bin, link)
        process.env.PATH = [link, saved].join(NodePath.delimiter)
        expect(yield* onPath("gopls", { projectRoot: root, trusted: false })).toBeUndefined()
        const gopls = SERVERS.find((s) => s.id === "gopls")!
        expect(yield* gopls.resolve(root, { projectRoot: root, trusted: false })).toEqual({
          missing: "gopls is not on PATH"
        })
      } finally {
        process.env.PATH = saved
        process.chdir(cwd)
      }
      expect(NodeFs.existsSync(marker)).toBe(false)
    }).pipe(Effect.provide(LocalFs.layerNative))
  )
})
