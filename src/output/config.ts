/**
 * The five FREECODE_OUTPUT_* settings, read through Effect Config when the layer is built
 * (not at module load), so a test or an embedder can provide its own ConfigProvider.
 */
import { Context, Effect, Layer } from "effect"
import { type InvalidSetting, positiveIntOr } from "../setting/positive-int.ts"

export interface OutputSettings {
  /** Most characters of one result the model sees (a tool may ask for less). */
  readonly maxChars: number
  /** Most lines of one result the model sees. */
  readonly maxLines: number
  /** Most characters of one result a UI gets (the tail). */
  readonly uiMaxChars: number
  /** Bytes of full outputs kept per session before the least recently used are dropped. */
  readonly storeBytes: number
  /** Sessions whose outputs are kept before the least recently used session is dropped. */
  readonly storeSessions: number
}

export const defaultOutputSettings: OutputSettings = {
  maxChars: 30_000,
  // Above read's 2,000-line window, so read's own "continue at" line is never what gets cut.
  maxLines: 3_000,
  uiMaxChars: 500_000,
  storeBytes: 64 * 1024 * 1024,
  storeSessions: 50
}

/** Each setting's environment variable. */
export const outputSettingNames: { readonly [K in keyof OutputSettings]: string } = {
  maxChars: "FREECODE_OUTPUT_MAX_CHARS",
  maxLines: "FREECODE_OUTPUT_MAX_LINES",
  uiMaxChars: "FREECODE_OUTPUT_UI_MAX_CHARS",
  storeBytes: "FREECODE_OUTPUT_STORE_BYTES",
  storeSessions: "FREECODE_OUTPUT_STORE_SESSIONS"
}

export { InvalidSetting } from "../setting/positive-int.ts"

const setting = (key: keyof OutputSettings) => positiveIntOr(outputSettingNames[key], defaultOutputSettings[key])

export const outputSettingsConfig: Effect.Effect<OutputSettings, InvalidSetting> = Effect.all({
  maxChars: setting("maxChars"),
  maxLines: setting("maxLines"),
  uiMaxChars: setting("uiMaxChars"),
  storeBytes: setting("storeBytes"),
  storeSessions: setting("storeSessions")
})

export class OutputConfig extends Context.Service<OutputConfig, OutputSettings>()("freecode/OutputConfig") {
  /** Reads the environment (or whatever ConfigProvider is in scope) once, when built. */
  static readonly layer = Layer.effect(
    OutputConfig,
    Effect.map(outputSettingsConfig, (settings) => OutputConfig.of(settings))
  )
  /** Fixed settings, for tests and embedders that configure in code. */
  static readonly layerWith = (settings: Partial<OutputSettings>) =>
    Layer.succeed(OutputConfig, OutputConfig.of({ ...defaultOutputSettings, ...settings }))
}

/** Where outputs too large for memory go: the spilling store's disk budget. */
export interface SpillSettings {
  /** Bytes of spilled outputs kept on disk across all sessions; one output never exceeds it. */
  readonly spillBytes: number
}

export const SPILL_BYTES_NAME = "FREECODE_OUTPUT_SPILL_BYTES"
export const defaultSpillBytes = 1024 * 1024 * 1024

/** Reads FREECODE_OUTPUT_SPILL_BYTES (default 1 GiB); a set but unusable value is an error. */
export const spillSettingsConfig: Effect.Effect<SpillSettings, InvalidSetting> = Effect.map(
  positiveIntOr(SPILL_BYTES_NAME, defaultSpillBytes),
  (spillBytes) => ({ spillBytes })
)
