/**
 * What the permission engine adds to a call: one decision for a shell command (parsed with the
 * bash grammar) and for a file path (resolved with symlinks), against a Claude-Code-sized rule set.
 *   node bench/permissions.ts
 */
import { mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect, Layer, ManagedRuntime } from "effect"
import { FreecodeConfig } from "../src/config/load.ts"
import { PermissionEngine } from "../src/permission/engine.ts"
import type { Tool, ToolContext } from "../src/tool/tool.ts"
import { Workspace } from "../src/tool/workspace.ts"
import { BashTool } from "../src/tools/bash.ts"
import { ReadTool } from "../src/tools/read.ts"
import { nodeLayer } from "../test/fs/layers.ts"
import { header, row, time } from "./lib.ts"

const root = realpathSync(mkdtempSync(join(tmpdir(), "freecode-bench-perm-")))
writeFileSync(join(root, "a.ts"), "x\n")
const allow = Array.from({ length: 40 }, (_, i) => `Bash(tool${i} run:*)`).concat(["Bash(npm test:*)", "Read(src/**)"])
const deny = ["Bash(rm:*)", "Bash(curl:*)", "Read(./.env)", "Read(./secrets/**)"]
const runtime = ManagedRuntime.make(
  PermissionEngine.layer.pipe(
    Layer.provide([FreecodeConfig.layerWith({ permissions: { allow, deny } }), Workspace.layer(root)]),
    Layer.provideMerge(nodeLayer)
  )
)
const ctx: ToolContext = { sessionId: "b", callId: "c", root, canSeeImages: false, emit: () => Effect.void }
const decide = (tool: unknown, args: unknown) =>
  runtime.runPromise(PermissionEngine.use((e) => e.decide({ tool: tool as Tool, args, ctx })))

const long = Array.from({ length: 20 }, (_, i) => `npm test -- --shard=${i}/20`).join(" && ")
const rows = [
  await time("bash: `npm test`", 2000, () => decide(BashTool, { command: "npm test" })),
  await time("bash: 20 commands joined with &&", 500, () => decide(BashTool, { command: long })),
  await time('bash: `echo "$(rm -rf x)"` (denied)', 2000, () => decide(BashTool, { command: 'echo "$(rm -rf x)"' })),
  await time("read: a file inside the project", 2000, () => decide(ReadTool, { filePath: "a.ts" }))
]
console.log(header)
for (const r of rows) console.log(row(r))
await runtime.dispose()
rmSync(root, { recursive: true, force: true })
