/**
 * The shape of `freecode.json`, in the shapes users know from Claude Code's settings so a block
 * can be pasted across: `permissions`, `hooks`, `mcpServers` (as in `.mcp.json`), plus our own
 * `profiles`. Validation is strict: an unknown key or a wrong type is an error naming the key
 * and what was expected, never a silent default.
 */

import { Schema } from "effect"
import { LspConfig } from "../lsp/config.ts"
import { McpServers } from "../mcp/config.ts"
import { parseRule } from "../permission/rules.ts"
import { providers } from "../registry/provider.ts"
import { SandboxConfig } from "../sandbox/settings.ts"

export const MODES = ["default", "acceptEdits", "plan", "bypassPermissions", "dontAsk"] as const
export type PermissionMode = (typeof MODES)[number]

const RuleText = Schema.String.check(
  Schema.makeFilter((text: string) => {
    const rule = parseRule(text)
    return typeof rule === "string" ? rule : undefined
  })
).annotate({ description: 'A rule: Tool or Tool(specifier), e.g. "Bash(npm test:*)".' })

const Rules = Schema.Array(RuleText)

export const PermissionsConfig = Schema.Struct({
  allow: Schema.optionalKey(Rules),
  ask: Schema.optionalKey(Rules),
  deny: Schema.optionalKey(Rules),
  defaultMode: Schema.optionalKey(Schema.Literals(MODES)),
  additionalDirectories: Schema.optionalKey(Schema.Array(Schema.String)),
  /** As in Claude Code: "disable" forbids bypassPermissions mode, here and in every profile. */
  disableBypassPermissionsMode: Schema.optionalKey(Schema.Literal("disable"))
})
export type PermissionsConfig = typeof PermissionsConfig.Type

export const CommandHookConfig = Schema.Struct({
  type: Schema.Literal("command"),
  command: Schema.String.check(Schema.isNonEmpty()),
  /** Seconds, as in Claude Code. Default 60. */
  timeout: Schema.optionalKey(Schema.Finite.check(Schema.isGreaterThan(0)))
})
export type CommandHookConfig = typeof CommandHookConfig.Type

export const HookMatcherConfig = Schema.Struct({
  /** A tool name, `A|B`, a regular expression, or `*` / empty / absent for every tool. */
  matcher: Schema.optionalKey(Schema.String),
  hooks: Schema.Array(CommandHookConfig)
})
export type HookMatcherConfig = typeof HookMatcherConfig.Type

export const HooksConfig = Schema.Struct({
  PreToolUse: Schema.optionalKey(Schema.Array(HookMatcherConfig)),
  PostToolUse: Schema.optionalKey(Schema.Array(HookMatcherConfig))
})
export type HooksConfig = typeof HooksConfig.Type

/** A named, narrower permission set a sub-agent gets. */
export const ProfileConfig = Schema.Struct({
  /** Which tools the agent may use: every tool, the read-only ones, or these names. */
  tools: Schema.optionalKey(Schema.Union([Schema.Literals(["all", "read-only"]), Schema.Array(Schema.String)])),
  mode: Schema.optionalKey(Schema.Literals(MODES)),
  allow: Schema.optionalKey(Rules),
  ask: Schema.optionalKey(Rules),
  deny: Schema.optionalKey(Rules)
})
export type ProfileConfig = typeof ProfileConfig.Type

/** Which tools are declared (docs/surfaces.md); a flag given on the command line wins. */
export const SurfaceConfig = Schema.Struct({
  mode: Schema.optionalKey(Schema.Literals(["all", "deferred", "shell"])),
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

export const FreecodeConfigSchema = Schema.Struct({
  $schema: Schema.optionalKey(Schema.String),
  permissions: Schema.optionalKey(PermissionsConfig),
  hooks: Schema.optionalKey(HooksConfig),
  mcpServers: Schema.optionalKey(McpServers),
  profiles: Schema.optionalKey(Schema.Record(Schema.String, ProfileConfig)),
  surface: Schema.optionalKey(SurfaceConfig),
  models: Schema.optionalKey(Schema.Array(ModelWiringConfig)),
  lsp: Schema.optionalKey(LspConfig),
  sandbox: Schema.optionalKey(SandboxConfig)
})
export type FreecodeConfigData = typeof FreecodeConfigSchema.Type

/** The keys each object may hold, for the "unknown key" message (`[]` stands for any index). */
export const KNOWN_KEYS: Readonly<Record<string, ReadonlyArray<string>>> = {
  "": ["$schema", "permissions", "hooks", "mcpServers", "profiles", "surface", "models", "lsp", "sandbox"],
  sandbox: [
    "enabled",
    "autoAllowBashIfSandboxed",
    "failIfUnavailable",
    "allowUnsandboxedCommands",
    "filesystem",
    "network"
  ],
  "sandbox.filesystem": ["allowWrite", "denyRead", "denyWrite"],
  "sandbox.network": ["allowedDomains"],
  lsp: ["servers"],
  surface: ["mode", "strategy", "core", "autoDeferTokens"],
  "models[]": ["pattern", "edit", "provider"],
  permissions: ["allow", "ask", "deny", "defaultMode", "additionalDirectories", "disableBypassPermissionsMode"],
  hooks: ["PreToolUse", "PostToolUse"],
  "hooks.PreToolUse[]": ["matcher", "hooks"],
  "hooks.PostToolUse[]": ["matcher", "hooks"],
  "hooks.PreToolUse[].hooks[]": ["type", "command", "timeout"],
  "hooks.PostToolUse[].hooks[]": ["type", "command", "timeout"],
  "profiles.*": ["tools", "mode", "allow", "ask", "deny"]
}
