/**
 * The permission engine's decisions on bash command lines, for the attack tests: `bashDecisions(root,
 * sessionId)` gives a call's context, the engine's layer under a config, and `wrong(config, want,
 * commands)`: the commands whose decision under `config` (the project at `root`) is not `want`,
 * each with the engine's reason.
 */
import { Effect, Layer } from "effect"
import type { FreecodeConfigData } from "../../layers/config.ts"
import { FreecodeConfig } from "../../src/config/load.ts"
import { PermissionEngine } from "../../src/permission/engine.ts"
import type { Tool, ToolContext } from "../../src/tool/tool.ts"
import { Workspace } from "../../src/tool/workspace.ts"
import { BashTool } from "../../src/tools/bash.ts"
import { nodeLayer } from "../fs/layers.ts"

export type Behavior = "allow" | "ask" | "deny"

export const bashDecisions = (root: string, sessionId: string) => {
  const ctx: ToolContext = { sessionId, callId: "c", root, canSeeImages: false, emit: () => Effect.void }
  const engineWith = (config: FreecodeConfigData) =>
    PermissionEngine.layer.pipe(
      Layer.provide([FreecodeConfig.layerWith(config), Workspace.layer(root)]),
      Layer.provideMerge(nodeLayer)
    )
  const wrong = (config: FreecodeConfigData, want: Behavior, commands: ReadonlyArray<string>) =>
    Effect.gen(function* () {
      const engine = yield* PermissionEngine
      const out: Array<string> = []
      for (const command of commands) {
        const d = yield* engine.decide({ tool: BashTool as unknown as Tool, args: { command }, ctx })
        if (d.behavior !== want) out.push(`${command} → ${d.behavior}: ${d.reason}`)
      }
      return out
    }).pipe(Effect.provide(engineWith(config)))
  return { ctx, engineWith, wrong }
}
