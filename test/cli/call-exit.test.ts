/** `call bash` ends with the command's own exit code; other tools with 0 (ok) or 1 (not ok). */
import { afterAll, describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { makeProject, runProcess } from "./helpers.ts"

const project = makeProject()
afterAll(project.cleanup)
const cli = (...args: Array<string>) => Effect.promise(() => runProcess(args))

describe.concurrent("call's exit code for a command", () => {
  for (const code of [0, 3, 42]) {
    it.live(`bash exiting ${code}: call exits ${code}, and --json says so too`, () =>
      Effect.gen(function* () {
        const r = yield* cli(
          "call",
          "bash",
          JSON.stringify({ command: `exit ${code}` }),
          "--yes",
          "--json",
          "--root",
          project.root
        )
        expect(r.code).toBe(code)
        const result = JSON.parse(r.stdout) as { status: string; metadata: { exitCode: number } }
        expect(result.status).toBe("ok")
        expect(result.metadata.exitCode).toBe(code)
      })
    )
  }

  it.live("a command that is refused (no --yes) exits 1, not the command's code", () =>
    Effect.gen(function* () {
      const r = yield* cli("call", "bash", '{"command":"exit 3"}', "--root", project.root)
      expect(r.code).toBe(1)
    })
  )
})
