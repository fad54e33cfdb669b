/** The surface and the model wiring table from freecode.json, through the real CLI; flags win. */

import * as NodePath from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { makeProject, REPO, runProcess } from "./helpers.ts"

const cli = (...args: Array<string>) => Effect.promise(() => runProcess(args))

const declared = (stdout: string): Array<string> =>
  (JSON.parse(stdout) as { readonly tools: ReadonlyArray<{ readonly name: string }> }).tools.map((t) => t.name)

describe.concurrent("freecode.json surface and models", () => {
  it.live(
    "surface.mode and surface.core apply; an explicit --surface all wins over the file",
    () =>
      Effect.gen(function* () {
        const project = makeProject({
          "freecode.json": JSON.stringify({ surface: { mode: "deferred", core: ["read", "grep"] } })
        })
        try {
          const fromFile = yield* cli("tools", "--json", "--root", project.root)
          expect(fromFile.code).toBe(0)
          expect(declared(fromFile.stdout).sort()).toEqual(["grep", "read", "tool_call", "tool_search"])
          const flag = yield* cli("tools", "--json", "--root", project.root, "--surface", "all")
          expect(declared(flag.stdout)).toContain("write")
          expect(declared(flag.stdout)).not.toContain("tool_search")
        } finally {
          project.cleanup()
        }
      }),
    120_000
  )

  it.live(
    "a models row is tried before the built-in table; a bad value is misuse naming the key",
    () =>
      Effect.gen(function* () {
        const project = makeProject({
          "freecode.json": JSON.stringify({
            models: [{ pattern: "house-model-*", edit: "apply_patch", provider: "openai" }]
          })
        })
        const bad = makeProject({ "freecode.json": JSON.stringify({ surface: { mode: "everything" } }) })
        try {
          const wired = yield* cli("tools", "--json", "--root", project.root, "--model", "house-model-2")
          expect(wired.code).toBe(0)
          expect(declared(wired.stdout)).toContain("apply_patch")
          expect(declared(wired.stdout)).not.toContain("edit")
          // The row's provider is the dialect `tools` measures in.
          const text = yield* cli("tools", "--root", project.root, "--model", "house-model-2")
          expect(text.stdout).toContain("declaration shape: openai's tools parameter entry")
          const builtIn = yield* cli("tools", "--json", "--root", project.root, "--model", "claude-sonnet-4")
          expect(declared(builtIn.stdout)).toContain("edit")
          expect(declared(builtIn.stdout)).not.toContain("apply_patch")
          const refused = yield* cli("tools", "--root", bad.root)
          expect(refused.code).toBe(2)
          expect(refused.stderr).toContain("surface.mode")
        } finally {
          project.cleanup()
          bad.cleanup()
        }
      }),
    120_000
  )

  it.live(
    "surface.autoDeferTokens and surface.strategy apply: MCP tools past the threshold are deferred, found tools expand",
    () =>
      Effect.gen(function* () {
        const fx = { command: process.execPath, args: [NodePath.join(REPO, "test/fixtures/mcp/server.ts")] }
        const project = makeProject({
          "freecode.json": JSON.stringify({ mcpServers: { fx }, surface: { autoDeferTokens: 100, strategy: "expand" } })
        })
        try {
          // The folder's own MCP server starts only in a trusted folder (--trust: for this run).
          const listed = yield* cli("tools", "--json", "--root", project.root, "--trust")
          expect(listed.code).toBe(0)
          const out = JSON.parse(listed.stdout)
          expect(out.autoDeferred).toMatchObject({ threshold: 100 })
          expect(out.searchable).toContain("mcp__fx__tree_sum")
          // expand: tool_search is declared, tool_call is not.
          expect(declared(listed.stdout)).toContain("tool_search")
          expect(declared(listed.stdout)).not.toContain("tool_call")
          expect(declared(listed.stdout).some((n) => n.startsWith("mcp__fx__"))).toBe(false)
        } finally {
          project.cleanup()
        }
      }),
    120_000
  )
})
