/**
 * The whole of freecode.json, assembled from the sections each feature owns (permission, hooks,
 * mcp, lsp, surface). Loading, merging and trust are src/config's; what the keys mean is the
 * features'. Only this composition knows every section, so no feature imports another's.
 */
import { Effect, type Path, type Result } from "effect"
import {
  type ConfigError,
  checkAgainstTools,
  type FreecodeConfigShape,
  type LoadOptions,
  loadConfigFiles,
  parseConfigWith
} from "../src/config/load.ts"
import type { ConfigSection, KnownTool } from "../src/config/section.ts"
import type { LocalFs } from "../src/fs/local-fs.ts"
import { hooksSection } from "../src/hooks/config.ts"
import { lspSection } from "../src/lsp/config.ts"
import { mcpServersSection } from "../src/mcp/config.ts"
import { LIST_RESOURCES_TOOL, READ_RESOURCE_TOOL } from "../src/mcp/resource-names.ts"
import { permissionsSection, profilesSection } from "../src/permission/config.ts"
import type { ToolRegistry } from "../src/registry/registry.ts"
import { sandboxSection } from "../src/sandbox/settings.ts"
import { modelsSection, surfaceSection } from "../src/surface/config.ts"
import { CALL_TOOL, SEARCH_TOOL } from "../src/surface/surface.ts"
import { AgentTool } from "../src/tools/agent.ts"
import { builtinTools } from "../src/tools/index.ts"
import { makeSkillTool } from "../src/tools/skill.ts"
import { WebSearchTool } from "../src/tools/websearch.ts"

export const CONFIG_SECTIONS = [
  permissionsSection,
  hooksSection,
  mcpServersSection,
  profilesSection,
  surfaceSection,
  modelsSection,
  lspSection,
  sandboxSection
] as const

type SectionValue<S> = S extends ConfigSection<infer A, string> ? A : never

/** freecode.json as values: what an embedder passes as `config`. */
export type FreecodeConfigData = { readonly $schema?: string } & {
  readonly [S in (typeof CONFIG_SECTIONS)[number] as S["key"]]?: SectionValue<S>
}

/** Validates a parsed freecode.json; `source` names the file in the message. */
export const parseConfig = (value: unknown, source: string): Result.Result<FreecodeConfigData, ConfigError> =>
  parseConfigWith(value, source, CONFIG_SECTIONS) as Result.Result<FreecodeConfigData, ConfigError>

/**
 * The configuration of a session at `root`: the person's own freecode.json, `.mcp.json`, then
 * the project's freecode.json or `file` (docs/configuration.md says how they merge).
 */
export const loadConfig = (
  root: string,
  file?: string,
  options: Omit<LoadOptions, "sections" | "file"> = {}
): Effect.Effect<FreecodeConfigShape, ConfigError, Path.Path | LocalFs> =>
  loadConfigFiles(root, { ...options, sections: CONFIG_SECTIONS, ...(file === undefined ? {} : { file }) })

/**
 * Tools that exist in some systems and not others (the built-ins an embedder left out, the
 * ones that need a model, a search API or a skill): a rule naming one is not a typo.
 */
const SOMETIMES: ReadonlyArray<KnownTool> = [
  ...builtinTools,
  AgentTool,
  WebSearchTool,
  makeSkillTool([]),
  { id: SEARCH_TOOL, operations: [] },
  { id: CALL_TOOL, operations: [] },
  // Registered while a connected MCP server has resources.
  { id: LIST_RESOURCES_TOOL, operations: ["mcp.call"] },
  { id: READ_RESOURCE_TOOL, operations: ["mcp.resource"] }
]

/** The configuration's tool names checked against the registered tools (and those that may be). */
export const checkConfigTools = (
  config: FreecodeConfigShape,
  registry: ToolRegistry["Service"]
): Effect.Effect<void, ConfigError> =>
  Effect.flatMap(registry.tools, (tools) => {
    const known = [...tools, ...SOMETIMES.filter((s) => !tools.some((t) => t.id === s.id))]
    const problem = checkAgainstTools(config, CONFIG_SECTIONS, known)
    return problem === undefined ? Effect.void : Effect.fail(problem)
  })
