/**
 * Which tools an agent is shown at all: exactly those the permission policies do not refuse on
 * every call (src/permission/policy.ts, `alwaysRefused` — the same functions the engine decides
 * with). A hidden tool is never declared and never returned by tool_search; scoping an agent
 * then costs nothing in the prompt, and the model never learns a tool it could not use.
 */
import { type FreecodeConfigShape, sectionOf } from "../config/load.ts"
import { permissionsSection } from "../permission/config.ts"
import { alwaysRefused, type StandingPolicy } from "../permission/policy.ts"
import { parseRule, type Rule } from "../permission/rules.ts"
import type { Tool } from "../tool/tool.ts"

/** What of a policy decides visibility (a compiled Policy is one, and the project's config makes one). */
export type Visibility = StandingPolicy

/** The project's own policy, from freecode.json (rules there were validated when it was loaded). */
export const fromConfig = (config: FreecodeConfigShape | undefined): Visibility => {
  const permissions = sectionOf(config, permissionsSection)
  return {
    name: "project",
    mode: permissions?.defaultMode ?? "default",
    deny: (permissions?.deny ?? []).flatMap((text): Array<{ readonly rule: Rule }> => {
      const rule = parseRule(text)
      return typeof rule === "string" ? [] : [{ rule }]
    }),
    tools: () => true
  }
}

/** Why a tool is hidden under these policies, or undefined when it is visible. */
export const hiddenBecause = (tool: Tool, policies: ReadonlyArray<Visibility>): string | undefined =>
  alwaysRefused(policies, tool)?.reason

export const isVisible = (tool: Tool, policies: ReadonlyArray<Visibility>): boolean =>
  alwaysRefused(policies, tool) === undefined
