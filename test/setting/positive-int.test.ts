/**
 * "A positive integer setting" is checked in one place (src/setting/positive-int.ts), with one
 * error: the jobs' settings and bash's largest timeout included, which had read theirs with
 * Config.Int (0 and negative numbers accepted; the jobs' unusable values silently replaced by
 * the defaults). And no other module reads a number setting its own way.
 */
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Effect, Layer } from "effect"
import { Jobs } from "../../src/jobs/jobs.ts"
import { positiveInt } from "../../src/setting/positive-int.ts"
import { maxTimeoutConfig } from "../../src/tools/bash.ts"

const withEnv = (env: Record<string, string>) =>
  Effect.provideService(ConfigProvider.ConfigProvider, ConfigProvider.fromEnv({ env }))

describe("a positive integer setting", () => {
  it.effect("is a whole number above 0; anything else set is an InvalidSetting naming it", () =>
    Effect.gen(function* () {
      expect(yield* positiveInt("N").pipe(withEnv({ N: " 12 " }))).toBe(12)
      expect(yield* positiveInt("N").pipe(withEnv({}))).toBeUndefined()
      for (const bad of ["0", "-3", "1.5", "ten"]) {
        const e = yield* Effect.flip(positiveInt("N").pipe(withEnv({ N: bad })))
        expect(e).toMatchObject({
          _tag: "InvalidSetting",
          name: "N",
          message: `N must be a positive integer, got ${bad}`
        })
      }
    })
  )

  it.effect("the jobs' settings: an unusable value stops the layer, naming it, instead of the default", () =>
    Effect.gen(function* () {
      for (const [name, value] of [
        ["FREECODE_JOBS_MAX", "0"],
        ["FREECODE_JOBS_IDLE_MS", "soon"],
        ["FREECODE_OUTPUT_SPILL_BYTES", "-1"]
      ] as const) {
        const e = yield* Effect.flip(Effect.scoped(Layer.build(Jobs.layer())).pipe(withEnv({ [name]: value })))
        expect(e).toMatchObject({ _tag: "InvalidSetting", name })
      }
      // Set and usable: the layer is built.
      yield* Effect.scoped(Layer.build(Jobs.layer())).pipe(withEnv({ FREECODE_JOBS_MAX: "2" }))
    })
  )

  it.effect("bash's largest timeout: 0 is refused, not taken as a limit that refuses every call", () =>
    Effect.gen(function* () {
      expect(yield* maxTimeoutConfig.pipe(withEnv({ FREECODE_BASH_MAX_TIMEOUT_MS: "5000" }))).toBe(5000)
      const e = yield* Effect.flip(maxTimeoutConfig.pipe(withEnv({ FREECODE_BASH_MAX_TIMEOUT_MS: "0" })))
      expect(e.message).toBe("FREECODE_BASH_MAX_TIMEOUT_MS must be a positive integer, got 0")
    })
  )

  it("is read nowhere else: no module of src/ reads a number setting with Config.Int or Config.Number", () => {
    // The one exception counts tokens where 0 means "never": not a positive integer.
    const allowed = new Set(["src/cli/system.ts: Config.Int(AUTO_DEFER_NAME)"])
    const SRC = NodePath.resolve(import.meta.dirname, "../../src")
    const found: Array<string> = []
    for (const file of NodeFs.readdirSync(SRC, { recursive: true, encoding: "utf8" })) {
      if (!file.endsWith(".ts") || file === "setting/positive-int.ts") continue
      const text = NodeFs.readFileSync(NodePath.join(SRC, file), "utf8")
      for (const m of text.matchAll(/Config\.(?:Int|Number|Integer)\([^)]*\)/g)) found.push(`src/${file}: ${m[0]}`)
    }
    expect(found.filter((f) => !allowed.has(f))).toEqual([])
  })
})
