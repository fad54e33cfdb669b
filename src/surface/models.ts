/**
 * Per-model wiring: which edit tool a model gets and which provider dialect its schemas are
 * compiled for, by model id. Models trained on patches (OpenAI's GPT-5 and o-series, Codex) get
 * `apply_patch` and lose `edit`; the rest get `edit` and lose `apply_patch` — one edit tool
 * declared, not two. The first rule whose pattern matches wins; an embedder passes its own table.
 */
import type { Provider } from "../registry/provider.ts"

export type EditTool = "edit" | "apply_patch"

export interface WiringRule {
  /** A model id glob, case-insensitive: `*` is any run of characters, `[0-9]` a class (`gpt-5*`, `o[0-9]*`). */
  readonly pattern: string
  readonly edit: EditTool
  readonly provider: Provider
}

export interface ModelWiring extends WiringRule {
  readonly model: string
  /** The edit tool this model does not get. */
  readonly hide: ReadonlyArray<string>
}

export const DEFAULT_WIRING: ReadonlyArray<WiringRule> = [
  // Open-weight GPTs and GPT-4.x were not trained on the patch format.
  { pattern: "*gpt-oss*", edit: "edit", provider: "openai" },
  { pattern: "*gpt-4*", edit: "edit", provider: "openai" },
  { pattern: "*codex*", edit: "apply_patch", provider: "openai-responses" },
  { pattern: "*gpt-5*", edit: "apply_patch", provider: "openai-responses" },
  { pattern: "o[0-9]*", edit: "apply_patch", provider: "openai-responses" },
  { pattern: "*/o[0-9]*", edit: "apply_patch", provider: "openai-responses" },
  { pattern: "*claude*", edit: "edit", provider: "anthropic" },
  { pattern: "*gemini*", edit: "edit", provider: "gemini" },
  // Anything else: an OpenAI-compatible endpoint (local models, most gateways).
  { pattern: "*", edit: "edit", provider: "openai" }
]

const globToRegExp = (glob: string): RegExp =>
  new RegExp(`^${glob.replace(/[.+?^${}()|\\]/g, "\\$&").replace(/\*/g, ".*")}$`, "i")

/** The wiring for a model id; a table without a match for it falls back to DEFAULT_WIRING's last rule. */
/** The rows a project configures (freecode.json `models`), tried before the built-in ones. */
export const wiringTable = (configured: ReadonlyArray<WiringRule> = []): ReadonlyArray<WiringRule> => [
  ...configured,
  ...DEFAULT_WIRING
]

export const wiringFor = (model: string, rules: ReadonlyArray<WiringRule> = DEFAULT_WIRING): ModelWiring => {
  // A provider prefix (`openai/gpt-5`, `anthropic/claude-…`) is part of the id: patterns use `*`.
  const rule = rules.find((r) => globToRegExp(r.pattern).test(model)) ?? DEFAULT_WIRING[DEFAULT_WIRING.length - 1]!
  return { ...rule, model, hide: [rule.edit === "edit" ? "apply_patch" : "edit"] }
}
