/**
 * glob, grep and ls end with a line saying how many more results there are. When their capped
 * list is still larger than the model's budget, the orchestrator's cut must keep that line.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { testToolSystem } from "../../layers/test.ts"
import { Orchestrator } from "../../src/orchestrator/orchestrator.ts"
import { GlobTool } from "../../src/tools/glob.ts"
import { GrepTool } from "../../src/tools/grep.ts"
import { LsTool } from "../../src/tools/ls.ts"

const root = mkdtempSync(join(tmpdir(), "freecode-capped-"))
afterAll(() => rmSync(root, { recursive: true, force: true }))
// 1,200 files with long names: 1,000 listed paths are far over a 10,000-character budget.
const dir = join(root, "a-rather-long-directory-name-for-generated-sources")
mkdirSync(dir)
for (let i = 0; i < 1200; i++) {
  writeFileSync(join(dir, `generated_module_with_a_long_name_${String(i).padStart(4, "0")}.ts`), "export const x = 1\n")
}

const system = Layer.fresh(testToolSystem({ root, output: { maxChars: 10_000 }, tools: [GlobTool, GrepTool, LsTool] }))
const call = (name: string, args: Record<string, unknown>) =>
  Orchestrator.use((o) => o.execute({ id: `${name}-1`, name, args }, { sessionId: "s" }))

describe("a capped list cut to the model's budget keeps its count line", () => {
  it.live("glob", () =>
    Effect.gen(function* () {
      const r = yield* call("glob", { pattern: "**/*.ts" })
      expect(r.truncated).toBe(true)
      expect(r.modelOutput.length).toBeLessThan(12_000)
      expect(r.modelOutput).toContain("(Showing 1000 of 1200 matching files. 200 more matched")
    }).pipe(Effect.provide(system))
  )

  it.live("grep", () =>
    Effect.gen(function* () {
      const r = yield* call("grep", { pattern: "export const", head_limit: 1000 })
      expect(r.truncated).toBe(true)
      expect(r.modelOutput).toMatch(
        /\(Showing 1000 of 1200 matching lines in \d+ files; 200 more\. Next page: offset=1000/
      )
    }).pipe(Effect.provide(system))
  )

  it.live("ls", () =>
    Effect.gen(function* () {
      const r = yield* call("ls", {})
      expect(r.truncated).toBe(true)
      expect(r.modelOutput).toContain("(Showing 1000 of 1201 entries.")
    }).pipe(Effect.provide(system))
  )
})
