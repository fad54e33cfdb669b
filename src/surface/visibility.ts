/**
 * Which tools an agent is shown at all. A tool a policy would refuse on every call — outside a
 * profile's tool filter, named by a deny rule without a specifier, or mutating under plan mode —
 * is hidden: never declared, never returned by tool_search. Scoping an agent then costs nothing
 * in the prompt, and the model never learns a tool it could not use.
 */
import { type FreecodeConfigShape, sectionOf } from "../config/load.ts"
import { type PermissionMode, permissionsSection } from "../permission/config.ts"
import type { Policy } from "../permission/engine.ts"
import { namesTool, parseRule, type Rule } from "../permission/rules.ts"
import type { Tool } from "../tool/tool.ts"

/** What of a policy decides visibility (a compiled Policy, or the project's config). */
export interface Visibility {
  readonly name: string
  readonly mode: PermissionMode
  /** Deny rules; only those without a specifier hide a tool (the rest depend on the call). */
  readonly deny: ReadonlyArray<Rule>
  readonly tools: (tool: Tool) => boolean
}

export const fromPolicy = (policy: Policy): Visibility => ({
  name: policy.name,
  mode: policy.mode,
  deny: policy.deny.map((c) => c.rule),
  tools: policy.tools
})

/** The project's own policy, from freecode.json (rules there were validated when it was loaded). */
export const fromConfig = (config: FreecodeConfigShape | undefined): Visibility => {
  const permissions = sectionOf(config, permissionsSection)
  return {
    name: "project",
    mode: permissions?.defaultMode ?? "default",
    deny: (permissions?.deny ?? []).flatMap((text) => {
      const rule = parseRule(text)
      return typeof rule === "string" ? [] : [rule]
    }),
    tools: () => true
  }
}

/** Why a tool is hidden under these policies, or undefined when it is visible. */
export const hiddenBecause = (tool: Tool, policies: ReadonlyArray<Visibility>): string | undefined => {
  for (const p of policies) {
    if (!p.tools(tool)) return `the ${p.name} profile does not include ${tool.id}`
    if (p.mode === "plan" && tool.mutates) return `${tool.id} changes things, and ${p.name} is in plan mode`
    const rule = p.deny.find((r) => r.specifier === undefined && namesTool(r, tool))
    if (rule !== undefined) return `${p.name} denies ${rule.text}`
  }
  return undefined
}

export const isVisible = (tool: Tool, policies: ReadonlyArray<Visibility>): boolean =>
  hiddenBecause(tool, policies) === undefined
