/**
 * The `permissions` and `profiles` sections of freecode.json, in Claude Code's shapes so a block
 * can be pasted across. Rules are checked twice: their text when the file is read (does it
 * parse, does it mean what it says), their tool names once the tools are known.
 */
import { Schema } from "effect"
import { defineSection, type KnownTool } from "../config/section.ts"
import { ruleToolProblem, toolIdProblem, validateRule } from "./rule-check.ts"

export const MODES = ["default", "acceptEdits", "plan", "bypassPermissions", "dontAsk"] as const
export type PermissionMode = (typeof MODES)[number]

const RuleText = Schema.String.check(Schema.makeFilter((text: string) => validateRule(text))).annotate({
  description: 'A rule: Tool or Tool(specifier), e.g. "Bash(npm test:*)".'
})

const Rules = Schema.Array(RuleText)

export const PermissionsConfig = Schema.Struct({
  allow: Schema.optionalKey(Rules),
  ask: Schema.optionalKey(Rules),
  deny: Schema.optionalKey(Rules),
  defaultMode: Schema.optionalKey(Schema.Literals(MODES)),
  additionalDirectories: Schema.optionalKey(Schema.Array(Schema.String)),
  /** As in Claude Code: "disable" forbids bypassPermissions mode, here and in every profile. */
  disableBypassPermissionsMode: Schema.optionalKey(Schema.Literal("disable")),
  /** Whether the built-in read-only shell commands run without asking (default and acceptEdits modes). Default true. */
  readOnlyCommands: Schema.optionalKey(Schema.Boolean)
})
export type PermissionsConfig = typeof PermissionsConfig.Type

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

const RULE_LISTS = ["allow", "ask", "deny"] as const

const ruleProblems = (
  where: string,
  lists: Partial<Record<(typeof RULE_LISTS)[number], ReadonlyArray<string>>>,
  tools: ReadonlyArray<KnownTool>
) =>
  RULE_LISTS.flatMap((list) =>
    (lists[list] ?? []).flatMap((text, i) => {
      const problem = ruleToolProblem(text, tools)
      return problem === undefined ? [] : [`${where}.${list}[${i}]: ${problem}`]
    })
  )

const concat = <T>(a: ReadonlyArray<T> | undefined, b: ReadonlyArray<T> | undefined) =>
  a === undefined ? b : b === undefined ? a : [...a, ...b]

/**
 * The person's rules and the project's are one list per behaviour (deny over ask over allow
 * decides, whichever file a rule is in); the project's mode wins; a bypass disabled anywhere
 * stays disabled.
 */
const mergePermissions = (lower: PermissionsConfig, upper: PermissionsConfig): PermissionsConfig => {
  const out: Record<string, unknown> = { ...lower, ...upper }
  for (const key of [...RULE_LISTS, "additionalDirectories"] as const) {
    const joined = concat(lower[key], upper[key])
    if (joined !== undefined) out[key] = joined
  }
  if (lower.disableBypassPermissionsMode !== undefined || upper.disableBypassPermissionsMode !== undefined) {
    out.disableBypassPermissionsMode = "disable"
  }
  return out as PermissionsConfig
}

export const permissionsSection = defineSection<PermissionsConfig, "permissions">({
  key: "permissions",
  schema: PermissionsConfig,
  knownKeys: {
    permissions: [
      "allow",
      "ask",
      "deny",
      "defaultMode",
      "additionalDirectories",
      "disableBypassPermissionsMode",
      "readOnlyCommands"
    ]
  },
  merge: mergePermissions,
  checkTools: (value, tools) => ruleProblems("permissions", value, tools)
})

type Profiles = Readonly<Record<string, ProfileConfig>>

export const profilesSection = defineSection<Profiles, "profiles">({
  key: "profiles",
  schema: Schema.Record(Schema.String, ProfileConfig),
  knownKeys: { "profiles.*": ["tools", "mode", "allow", "ask", "deny"] },
  // A profile is one set of rules: the project's profile of a name replaces the person's.
  merge: (lower, upper) => ({ ...lower, ...upper }),
  checkTools: (value, tools) =>
    Object.entries(value).flatMap(([name, p]) => [
      ...(Array.isArray(p.tools) ? p.tools : []).flatMap((id: string, i: number) => {
        const problem = toolIdProblem(id, tools)
        return problem === undefined ? [] : [`profiles.${name}.tools[${i}]: ${problem}`]
      }),
      ...ruleProblems(`profiles.${name}`, p, tools)
    ])
})
