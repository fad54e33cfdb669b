/** One tool system per benchmark, built once, with the real Node services. */
import { ConfigProvider, Layer, ManagedRuntime } from "effect"
import { ToolSystem } from "../layers/live.ts"
import { Orchestrator } from "../src/orchestrator/orchestrator.ts"
import type { ToolResult } from "../src/tool/result.ts"
import type { Tool } from "../src/tool/tool.ts"
import { type BuiltinRequirements, builtinTools } from "../src/tools/index.ts"

export interface RunnerOptions {
  readonly extra?: ReadonlyArray<Tool<BuiltinRequirements>>
  /** Settings on top of the environment, e.g. FREECODE_READ_DEDUP=0 to measure real reads. */
  readonly env?: Readonly<Record<string, string>>
}

export const makeRunner = (root: string, options: RunnerOptions = {}) => {
  const env = { ...process.env, ...options.env } as Record<string, string>
  const layer = ToolSystem.layer({ root, tools: [...builtinTools, ...(options.extra ?? [])] }).pipe(
    Layer.provide(ConfigProvider.layer(ConfigProvider.fromEnv({ env })))
  )
  const runtime = ManagedRuntime.make(layer)
  let n = 0
  const call = (name: string, args: unknown): Promise<ToolResult> =>
    runtime.runPromise(Orchestrator.use((o) => o.execute({ id: `b${n++}`, name, args }, { sessionId: "bench" })))
  return { call, dispose: () => runtime.dispose() }
}

export const expectOk = (result: ToolResult) => {
  if (result.status !== "ok") throw new Error(`${result.tool} failed: ${result.modelOutput}`)
  return result
}
