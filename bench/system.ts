/** One tool system for all benchmarks, built once, with the real Node services. */
import { ManagedRuntime } from "effect"
import { ToolSystem } from "../layers/live.ts"
import { Orchestrator } from "../src/orchestrator/orchestrator.ts"
import type { ToolResult } from "../src/tool/result.ts"
import type { Tool } from "../src/tool/tool.ts"
import { type BuiltinRequirements, builtinTools } from "../src/tools/index.ts"

export const makeRunner = (root: string, extra: ReadonlyArray<Tool<BuiltinRequirements>> = []) => {
  const runtime = ManagedRuntime.make(ToolSystem.layer({ root, tools: [...builtinTools, ...extra] }))
  let n = 0
  const call = (name: string, args: unknown): Promise<ToolResult> =>
    runtime.runPromise(Orchestrator.use((o) => o.execute({ id: `b${n++}`, name, args }, { sessionId: "bench" })))
  return { call, dispose: () => runtime.dispose() }
}

export const expectOk = (result: ToolResult) => {
  if (result.status !== "ok") throw new Error(`${result.tool} failed: ${result.modelOutput}`)
  return result
}
