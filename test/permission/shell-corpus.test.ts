/**
 * The shell corpus through the permission engine: every case is decided; every command the
 * engine allows is then really run with /bin/bash, and no case's marker may appear. Target:
 * 0 unsafe allows. Over-refusals (a case the corpus expects to be allowed, refused) are listed.
 */
import { execFileSync } from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { afterAll, describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { FreecodeConfig } from "../../src/config/load.ts"
import { type Decision, PermissionEngine } from "../../src/permission/engine.ts"
import type { Tool, ToolContext } from "../../src/tool/tool.ts"
import { Workspace } from "../../src/tool/workspace.ts"
import { BashTool } from "../../src/tools/bash.ts"
import { nodeLayer } from "../fs/layers.ts"
import { corpus, makeShellWorld } from "./shell-world.ts"

const world = makeShellWorld()
afterAll(world.cleanup)

const layer = PermissionEngine.layer.pipe(
  Layer.provide([FreecodeConfig.layerWith(corpus.rules), Workspace.layer(world.dir)]),
  Layer.provideMerge(nodeLayer)
)

const ctx: ToolContext = {
  sessionId: "corpus",
  callId: "c",
  root: world.dir,
  canSeeImages: false,
  emit: () => Effect.void
}

describe("shell corpus through the engine", () => {
  it("has at least 100 cases, every refused one carrying a marker", () => {
    expect(corpus.cases.length).toBeGreaterThanOrEqual(100)
    for (const c of corpus.cases.filter((c) => c.expect === "refuse" || c.expect === "deny"))
      expect(c.command).toContain("{M}")
  })

  it("every refused case is live: run by bash with no check, it leaves its marker (unless bash cannot parse it)", () => {
    // Proves the marker test can fail: an engine that let any of these through would leave a file.
    const bare = makeShellWorld()
    try {
      const refused = corpus.cases.filter((c) => c.expect === "refuse" || c.expect === "deny")
      const unparsable: Array<number> = []
      for (const c of refused) {
        const command = bare.fill(c)
        try {
          execFileSync("/bin/bash", ["-n", "-c", command], { stdio: "ignore" })
        } catch {
          unparsable.push(c.id)
          continue
        }
        try {
          execFileSync("/bin/bash", ["-c", command], { cwd: bare.dir, env: bare.env, timeout: 10_000, stdio: "ignore" })
        } catch {
          // Some cases fail after touching their marker (a denied `rm` of a missing victim, …).
        }
        NodeFs.writeFileSync(NodePath.join(bare.dir, "victim"), "restored\n")
      }
      // Process substitutions run asynchronously: give them a moment before looking.
      execFileSync("/bin/sleep", ["0.3"])
      const missing = refused.filter((c) => !unparsable.includes(c.id) && !NodeFs.existsSync(bare.marker(c.id)))
      expect(missing.map((c) => `#${c.id} ${JSON.stringify(c.command)}`)).toEqual([])
      // Only the parse-error cases (which must fail closed) are exempt.
      expect(unparsable.length).toBeLessThan(10)
    } finally {
      bare.cleanup()
    }
  }, 120_000)

  it.live(
    "0 unsafe allows: refused cases are refused, deny cases denied, allowed ones run and leave no marker",
    () =>
      Effect.gen(function* () {
        const engine = yield* PermissionEngine
        const decided: Array<{ id: number; expect: string; command: string; decision: Decision }> = []
        for (const c of corpus.cases) {
          const command = world.fill(c)
          const decision = yield* engine.decide({ tool: BashTool as unknown as Tool, args: { command }, ctx })
          decided.push({ id: c.id, expect: c.expect, command, decision })
        }
        // Run what was allowed, for real: an unsafe allow would leave its marker.
        for (const d of decided.filter((d) => d.decision.behavior === "allow")) {
          try {
            execFileSync("/bin/bash", ["-c", d.command], {
              cwd: world.dir,
              env: world.env,
              timeout: 10_000,
              stdio: "ignore"
            })
          } catch {
            // A failing command is fine; what it left behind is what counts.
          }
        }
        const unsafe = decided.filter(
          (d) => (d.expect === "refuse" || d.expect === "deny") && d.decision.behavior === "allow"
        )
        expect(unsafe.map((d) => `#${d.id} ${JSON.stringify(d.command)}`)).toEqual([])
        expect(world.markers()).toEqual([])
        expect(world.victimExists()).toBe(true)
        const notDenied = decided.filter((d) => d.expect === "deny" && d.decision.behavior !== "deny")
        expect(notDenied.map((d) => `#${d.id} ${d.command}: ${d.decision.reason}`)).toEqual([])
        const wronglyRefused = decided.filter((d) => d.expect === "allow" && d.decision.behavior !== "allow")
        expect(wronglyRefused.map((d) => `#${d.id} ${JSON.stringify(d.command)}: ${d.decision.reason}`)).toEqual([])
        // "safe" cases are harmless commands this engine refuses by design (fail closed): the
        // over-refusals docs/benchmarks.md lists. Printed so the count can be checked there.
        const overRefused = decided.filter((d) => d.expect === "safe" && d.decision.behavior !== "allow")
        console.log(
          `shell corpus: ${decided.length} cases, 0 unsafe allows, ${overRefused.length} over-refusals:\n` +
            overRefused.map((d) => `  #${d.id} ${JSON.stringify(d.command)} — ${d.decision.reason}`).join("\n")
        )
        // Each refusal says why, so the model can do something else.
        for (const d of decided.filter((d) => d.decision.behavior !== "allow"))
          expect(d.decision.reason.length).toBeGreaterThan(20)
      }).pipe(Effect.provide(layer)),
    120_000
  )
})
