/**
 * Policies — the project's rules and each profile's — as the engine compiles them, and the
 * refusals that hold for every call of a tool whatever its arguments (its "standing"): outside
 * the profile's tool filter, named by a deny rule without a specifier, or mutating under plan
 * mode. The engine decides with these same functions, and the surface hides exactly what they
 * refuse, so what is declared, searchable and runnable never disagree.
 */
import { Effect } from "effect"
import { ConfigError } from "../config/load.ts"
import { changesNothing } from "../tool/read-only.ts"
import type { CheckedPath, Tool } from "../tool/tool.ts"
import type { PermissionMode, ProfileConfig } from "./config.ts"
import { type CommandPattern, commandSpecifier, namesTool, parseRule, type Rule, type RuleBehavior } from "./rules.ts"
import { ruleWords, type ShellParser } from "./shell.ts"

/** What "always" saves: one normalized subject of one tool, for one session. */
export interface Grant {
  readonly tool: string
  readonly key: string
  /** The rule as a person reads it, e.g. `bash(npm test)`. */
  readonly display: string
}

export interface Decision {
  readonly behavior: RuleBehavior
  /** Why, in words the model and the person can act on. */
  readonly reason: string
  /** What decided it. */
  readonly by: "rule" | "mode" | "session" | "declaration" | "profile" | "hook" | "person" | "sandbox" | "error"
  /** The configured rule that decided it, when one did. */
  readonly rule?: string
  /** The policy that decided it: "project" or a profile's name. */
  readonly policy: string
  /** What an "always" answer would save; absent when a configured ask rule decided (always is not offered). */
  readonly grant?: Grant
  /**
   * A file tool's paths as this decision saw them: each as given and as it really was. The tool
   * is handed them (ToolContext.checked), so what it opens is what was checked.
   */
  readonly checked?: ReadonlyArray<CheckedPath>
}

export interface CompiledRule {
  readonly rule: Rule
  /**
   * For shell tools: the specifier as words (undefined when it does not parse as one command).
   * Split on first use, so a session that never runs a shell command never loads the grammar.
   */
  readonly command: () => CommandPattern | undefined
}

/** One layer of rules: the project's configuration, or a profile. */
export interface Policy {
  readonly name: string
  readonly mode: PermissionMode
  readonly allow: ReadonlyArray<CompiledRule>
  readonly ask: ReadonlyArray<CompiledRule>
  readonly deny: ReadonlyArray<CompiledRule>
  /** Which tools this policy lets an agent use at all. */
  readonly tools: (tool: Tool) => boolean
}

export const compile = (parser: () => ShellParser, text: string, where: string): CompiledRule | ConfigError => {
  const rule = parseRule(text)
  if (typeof rule === "string") return new ConfigError({ message: `${where}: ${rule}` })
  const specifier = rule.specifier
  if (specifier === undefined) return { rule, command: () => undefined }
  let pattern: CommandPattern | undefined | null = null
  const command = () => {
    if (pattern === null) {
      const spec = commandSpecifier(specifier)
      const words = spec.text === "" ? [] : ruleWords(parser(), spec.text)
      pattern = words === undefined ? undefined : { words, prefix: spec.prefix }
    }
    return pattern
  }
  return { rule, command }
}

export const compileAll = (parser: () => ShellParser, texts: ReadonlyArray<string> | undefined, where: string) =>
  Effect.forEach(texts ?? [], (text, i) => {
    const c = compile(parser, text, `${where}[${i}]`)
    return c instanceof ConfigError ? Effect.fail(c) : Effect.succeed(c)
  })

export const toolFilter = (tools: ProfileConfig["tools"]): ((tool: Tool) => boolean) => {
  if (tools === undefined || tools === "all") return () => true
  // A program (`code`) changes nothing itself: each call it makes is decided under this same profile.
  if (tools === "read-only") return (tool) => changesNothing(tool) || tool.operations.includes("program.run")
  const names = new Set(tools.map((t) => t.toLowerCase()))
  return (tool) => names.has(tool.id.toLowerCase())
}

export const BUILTIN_PROFILES: Readonly<Record<string, ProfileConfig>> = {
  /** Only tools that change nothing (tool/read-only.ts): not even the session's memory or todo list. */
  "read-only": { tools: "read-only" },
  /** Plan mode: everything may be looked at, nothing that mutates runs. */
  plan: { mode: "plan" }
}

/** What of a policy decides a tool's standing: its name, mode, deny rules and tool filter. */
export interface StandingPolicy {
  readonly name: string
  readonly mode: PermissionMode
  readonly deny: ReadonlyArray<{ readonly rule: Rule }>
  readonly tools: (tool: Tool) => boolean
}

/** Outside the policy's tool filter. */
export const refusedByProfile = (policy: StandingPolicy, tool: Tool): Decision | undefined =>
  policy.tools(tool)
    ? undefined
    : {
        policy: policy.name,
        behavior: "deny",
        by: "profile",
        reason: `${tool.id} is not available to this agent (profile ${policy.name}). Use the tools you were given.`
      }

/** A deny rule that applies to the call. */
export const refusedByRule = (policy: StandingPolicy, tool: Tool, rule: Rule): Decision => ({
  policy: policy.name,
  behavior: "deny",
  by: "rule",
  rule: rule.text,
  reason: `The rule ${rule.text} denies this ${tool.id} call. Do not retry it; do the task another way.`
})

/**
 * Plan mode: nothing that mutates runs. `agent` and `code` are the exceptions: a child (each call of a program) runs under this same
 * policy (profiles chain), so plan mode holds for every call the child makes, and a planner may
 * still explore.
 */
export const refusedByPlan = (policy: StandingPolicy, tool: Tool): Decision | undefined =>
  policy.mode === "plan" &&
  tool.mutates &&
  !tool.operations.includes("agent.spawn") &&
  !tool.operations.includes("program.run")
    ? {
        policy: policy.name,
        behavior: "deny",
        by: "mode",
        reason: `Plan mode: ${tool.id} changes things, so it does not run now. Describe the change in your plan instead.`
      }
    : undefined

/** The refusal every call of `tool` gets under these policies (in order), whatever its arguments. */
export const alwaysRefused = (policies: ReadonlyArray<StandingPolicy>, tool: Tool): Decision | undefined => {
  for (const p of policies) {
    const bare = p.deny.find((c) => c.rule.specifier === undefined && namesTool(c.rule, tool))
    const refusal = refusedByProfile(p, tool) ?? (bare && refusedByRule(p, tool, bare.rule)) ?? refusedByPlan(p, tool)
    if (refusal !== undefined) return refusal
  }
  return undefined
}
