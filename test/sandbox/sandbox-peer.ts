/**
 * Another process with a sandbox of its own, for the tests where two processes (two users, or
 * one user with two registries) share a project: runs one script inside its Sandbox layer and
 * prints what it wrote and the audit's sentences as JSON, then ends the layer (which collects
 * its placeholders). Its argument is JSON: { root, home, registry, script }.
 */
import { spawn } from "node:child_process"
import { Effect, Layer } from "effect"
import type { RegistryChoice } from "../../src/sandbox/placeholder-registry.ts"
import { Sandbox } from "../../src/sandbox/sandbox.ts"
import { resolveSandboxSettings } from "../../src/sandbox/settings.ts"

const { root, home, registry, script } = JSON.parse(process.argv[2]!) as {
  root: string
  home: string
  registry: RegistryChoice
  script: string
}

const result = await Effect.runPromise(
  Effect.gen(function* () {
    const sandbox = yield* Sandbox
    const line = yield* sandbox.wrap(["/bin/bash", "-c", 'exec 2>&1; eval "$1"', "script", script], {
      sessionId: "peer",
      cwd: root,
      writable: []
    })
    const output = yield* Effect.promise(
      () =>
        new Promise<string>((resolve) => {
          const child = spawn(line[0]!, line.slice(1), { stdio: ["ignore", "pipe", "pipe"] })
          let out = ""
          child.stdout.on("data", (d) => (out += d))
          child.stderr.on("data", (d) => (out += d))
          child.on("close", () => resolve(out))
        })
    )
    const notices = yield* sandbox.audit!(line)
    return { output, notices }
  }).pipe(
    Effect.provide(
      Layer.fresh(Sandbox.layer(resolveSandboxSettings({ enabled: true }, false), { root, home, registry }))
    ),
    Effect.scoped
  )
)
process.stdout.write(JSON.stringify(result))
