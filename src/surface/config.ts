/** The `surface` and `models` sections of freecode.json (docs/surfaces.md); a flag on the command line wins. */
import { Schema } from "effect"
import { defineSection } from "../config/section.ts"
import { providers } from "../registry/provider.ts"

/** Which tools are declared. */
export const SurfaceConfig = Schema.Struct({
  mode: Schema.optionalKey(Schema.Literals(["all", "deferred", "shell", "code"])),
  strategy: Schema.optionalKey(Schema.Literals(["bridge", "expand"])),
  core: Schema.optionalKey(Schema.Array(Schema.String)),
  autoDeferTokens: Schema.optionalKey(Schema.Int.check(Schema.isGreaterThanOrEqualTo(0)))
})
export type SurfaceConfig = typeof SurfaceConfig.Type

/** One row of the per-model wiring table; rows here are tried before the built-in ones. */
export const ModelWiringConfig = Schema.Struct({
  pattern: Schema.String,
  edit: Schema.Literals(["edit", "apply_patch"]),
  provider: Schema.Literals(providers)
})
export type ModelWiringConfig = typeof ModelWiringConfig.Type

export const surfaceSection = defineSection<SurfaceConfig, "surface">({
  key: "surface",
  schema: SurfaceConfig,
  knownKeys: { surface: ["mode", "strategy", "core", "autoDeferTokens"] },
  // Key by key: the project's setting wins over the person's.
  merge: (lower, upper) => ({ ...lower, ...upper })
})

export const modelsSection = defineSection<ReadonlyArray<ModelWiringConfig>, "models">({
  key: "models",
  schema: Schema.Array(ModelWiringConfig),
  knownKeys: { "models[]": ["pattern", "edit", "provider"] },
  // Rows are tried in order: the project's first, then the person's.
  merge: (lower, upper) => [...upper, ...lower]
})
