/**
 * bench/bash.ts's child on the compiled build (`npm run build` writes dist/): one bash call in a
 * process running JavaScript, as an installed freecode-tools does, so its peak RSS carries no
 * TypeScript loader. Prints {ms, maxRssMB}.
 *   node bench/bash-dist-child.mjs COMMAND
 */
import { ConfigProvider, Layer, ManagedRuntime } from "effect"
import { ToolSystem } from "../dist/layers/live.js"
import { Orchestrator } from "../dist/src/orchestrator/orchestrator.js"

const layer = ToolSystem.layer({ root: process.cwd() }).pipe(
  Layer.provide(ConfigProvider.layer(ConfigProvider.fromEnv({ env: process.env })))
)
const runtime = ManagedRuntime.make(layer)
let n = 0
const call = (command) =>
  runtime.runPromise(
    Orchestrator.use((o) => o.execute({ id: `d${n++}`, name: "bash", args: { command } }, { sessionId: "bench" }))
  )
await call("true")
const start = performance.now()
const result = await call(process.argv[2])
const ms = performance.now() - start
await runtime.dispose()
if (result.status !== "ok") throw new Error(result.modelOutput)
process.stdout.write(JSON.stringify({ ms, maxRssMB: process.resourceUsage().maxRSS / 1024 }))
