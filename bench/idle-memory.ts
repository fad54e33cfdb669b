/**
 * The idle floor: resident memory of a process that built the whole tool system and ran one
 * `echo hi` through bash. Whatever is loaded eagerly but needed only by some calls shows here.
 *   node bench/idle-memory.ts
 * Each figure is taken in a fresh process (so one phase's garbage does not count for the next),
 * after a full GC when run with --expose-gc (the script re-runs itself with it).
 */
import { spawnSync } from "node:child_process"
import { getHeapSpaceStatistics } from "node:v8"

type Phase = "node" | "imported" | "built" | "echo"

const snapshot = () => {
  ;(globalThis as { gc?: () => void }).gc?.()
  const m = process.memoryUsage()
  const mb = (n: number) => Math.round((n / 1024 / 1024) * 10) / 10
  return {
    rssMB: mb(m.rss),
    heapUsedMB: mb(m.heapUsed),
    externalMB: mb(m.external),
    arrayBuffersMB: mb(m.arrayBuffers),
    // Empty after the GC but still resident: V8 grows it while modules load and keeps it.
    youngMB: mb(getHeapSpaceStatistics().find((space) => space.space_name === "new_space")?.physical_space_size ?? 0),
    maxRssMB: mb(process.resourceUsage().maxRSS * 1024)
  }
}

/** Runs up to `phase` and prints its figures as JSON. */
const child = async (phase: Phase) => {
  if (phase === "node") return snapshot()
  // Imported here, so the first phase measures node alone.
  const { ConfigProvider, Layer, ManagedRuntime } = await import("effect")
  const { ToolSystem } = await import("../layers/live.ts")
  const { Orchestrator } = await import("../src/orchestrator/orchestrator.ts")
  // The whole system as an embedder gets it: every built-in, skills and websearch included.
  const layer = ToolSystem.layer({ root: process.cwd() }).pipe(
    Layer.provide(ConfigProvider.layer(ConfigProvider.fromEnv({ env: process.env as Record<string, string> })))
  )
  const runtime = ManagedRuntime.make(layer)
  if (phase === "imported") return snapshot()
  const call = (name: string, args: unknown) =>
    runtime.runPromise(Orchestrator.use((o) => o.execute({ id: name, name, args }, { sessionId: "idle" })))
  // Any call builds the layers; `ls` needs neither a process nor the shell grammar.
  const result = phase === "built" ? await call("ls", { path: "." }) : await call("bash", { command: "echo hi" })
  if (result.status !== "ok") throw new Error(result.modelOutput)
  const s = snapshot()
  await runtime.dispose()
  return s
}

const phases: ReadonlyArray<readonly [Phase, string]> = [
  ["node", "node alone (this script, no import)"],
  ["imported", "tool system imported, runtime made (no layer built yet)"],
  ["built", "layers built, one `ls` call"],
  ["echo", "layers built, one bash `echo hi` call"]
]

if (process.argv[2] === "--child") {
  process.stdout.write(JSON.stringify(await child(process.argv[3] as Phase)))
} else {
  console.log("| after | RSS | peak RSS | JS heap used | young generation (committed) | external (ArrayBuffers) |")
  console.log("| --- | --- | --- | --- | --- | --- |")
  for (const [phase, label] of phases) {
    const out = spawnSync(process.execPath, ["--expose-gc", import.meta.filename, "--child", phase], {
      encoding: "utf8"
    })
    if (out.status !== 0) throw new Error(out.stderr)
    const s = JSON.parse(out.stdout) as ReturnType<typeof snapshot>
    console.log(
      `| ${label} | ${s.rssMB} MB | ${s.maxRssMB} MB | ${s.heapUsedMB} MB | ${s.youngMB} MB | ${s.externalMB} MB (${s.arrayBuffersMB} MB) |`
    )
  }
}
