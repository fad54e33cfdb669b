/**
 * One policy's answer for one call, from what the call touches. Order:
 *   tool filter → deny rules → plan mode (nothing that mutates runs) → bypassPermissions →
 *   ask rules → what the call touches (a shell command part by part, paths outside the project,
 *   secret files) → allow rules and saved approvals → acceptEdits → the declaration (read-only
 *   tools run, mutating ones ask).
 * A saved approval never overrides a configured ask or deny. Pure: the engine gathers the
 * subjects and the saved approvals, and combines the policies.
 */
import type { Tool } from "../tool/tool.ts"
import { isSensitive } from "./containment.ts"
import {
  type CompiledRule,
  type Decision,
  type Policy,
  refusedByPlan,
  refusedByProfile,
  refusedByRule
} from "./policy.ts"
import { matchesCommand, matchesDomain, namesTool } from "./rules.ts"
import { type Subjects, withBasename } from "./subjects.ts"

/** Where the project is: its root as given and as it really is, and what counts as inside it. */
export interface Where {
  readonly root: string
  readonly realRoot: string
  readonly inside: (real: string) => boolean
  /** The engine's own path matcher (its compiled globs are cached per engine). */
  readonly matchesPath: (specifier: string, root: string, abs: string) => boolean
}

/** Whether a deny or ask rule applies to any part of the call. */
export const touchesAny = (where: Where, c: CompiledRule, tool: Tool, s: Subjects): boolean => {
  if (!namesTool(c.rule, tool)) return false
  const spec = c.rule.specifier
  if (spec === undefined) return true
  switch (s.kind) {
    case "shell": {
      const pattern = c.command()
      return (
        pattern !== undefined &&
        s.shell!.analysis.candidates.some((cand) => withBasename(cand).some((w) => matchesCommand(pattern, w)))
      )
    }
    case "file":
      return s.paths.some(
        (p) => where.matchesPath(spec, where.root, p.abs) || where.matchesPath(spec, where.realRoot, p.real)
      )
    case "network":
      return s.hosts.some((h) => matchesDomain(spec, h))
    default:
      return false
  }
}

/** An allow rule with a path that covers this (real) path. */
export const allowsPath = (where: Where, policy: Policy, tool: Tool, p: { abs: string; real: string }) =>
  policy.allow.some(
    (c) =>
      c.rule.specifier !== undefined &&
      namesTool(c.rule, tool) &&
      where.matchesPath(c.rule.specifier, where.realRoot, p.real)
  )

/** Whether an allow rule covers the whole call. */
const coveringAllow = (where: Where, policy: Policy, tool: Tool, s: Subjects): CompiledRule | undefined => {
  for (const c of policy.allow) {
    if (!namesTool(c.rule, tool)) continue
    const spec = c.rule.specifier
    if (spec === undefined) return c
    if (
      s.kind === "file" &&
      s.paths.length > 0 &&
      s.paths.every((p) => where.matchesPath(spec, where.realRoot, p.real))
    )
      return c
    if (s.kind === "network" && s.hosts.length > 0 && s.hosts.every((h) => matchesDomain(spec, h))) return c
  }
  return undefined
}

export const decideOne = (where: Where, policy: Policy, tool: Tool, s: Subjects, saved: boolean): Decision => {
  const base = { policy: policy.name }
  const ask = (reason: string, by: Decision["by"] = "declaration"): Decision =>
    policy.mode === "dontAsk"
      ? {
          ...base,
          behavior: "deny",
          by: "mode",
          reason: `${reason} (dontAsk mode refuses anything not allowed beforehand).`
        }
      : { ...base, behavior: "ask", by, reason, grant: s.grant }
  const standing = refusedByProfile(policy, tool)
  if (standing !== undefined) return standing
  const deny = policy.deny.find((c) => touchesAny(where, c, tool, s))
  if (deny !== undefined) return refusedByRule(policy, tool, deny.rule)
  const plan = refusedByPlan(policy, tool)
  if (plan !== undefined) return plan
  if (policy.mode === "bypassPermissions") {
    return {
      ...base,
      behavior: "allow",
      by: "mode",
      reason: "bypassPermissions mode allows everything that no deny rule refuses."
    }
  }
  const askRule = policy.ask.find((c) => touchesAny(where, c, tool, s))
  if (askRule !== undefined) {
    return policy.mode === "dontAsk"
      ? {
          ...base,
          behavior: "deny",
          by: "mode",
          rule: askRule.rule.text,
          reason: `The rule ${askRule.rule.text} asks for approval, and dontAsk mode refuses instead.`
        }
      : {
          ...base,
          behavior: "ask",
          by: "rule",
          rule: askRule.rule.text,
          reason: `The rule ${askRule.rule.text} asks for approval of this ${tool.id} call.`
        }
  }
  if (s.unknown !== undefined) return ask(`${s.unknown}; this call needs approval.`)
  const bare = policy.allow.find((c) => c.rule.specifier === undefined && namesTool(c.rule, tool))

  if (s.kind === "shell") {
    if (bare !== undefined)
      return {
        ...base,
        behavior: "allow",
        by: "rule",
        rule: bare.rule.text,
        reason: `The rule ${bare.rule.text} allows every ${tool.id} call.`
      }
    if (saved)
      return {
        ...base,
        behavior: "allow",
        by: "session",
        reason: `Approved for this session: ${s.grant.display}.`
      }
    const { analysis, command, sandboxed } = s.shell!
    // Deny and ask rules were decided above; inside the boundary nothing else needs a person.
    if (sandboxed)
      return {
        ...base,
        behavior: "allow",
        by: "sandbox",
        reason: "Runs inside the OS sandbox (writes only inside the project, network only to allowed domains)."
      }
    if (analysis.concerns.length > 0) return ask(`This command needs approval: ${analysis.concerns.join("; ")}.`)
    const rules = analysis.commands.map((cmd) =>
      policy.allow.find((c) => {
        if (!namesTool(c.rule, tool)) return false
        const pattern = c.command()
        return pattern !== undefined && matchesCommand(pattern, cmd.words)
      })
    )
    if (analysis.commands.length > 0 && rules.every((r) => r !== undefined)) {
      const texts = [...new Set(rules.map((r) => r!.rule.text))]
      return {
        ...base,
        behavior: "allow",
        by: "rule",
        rule: texts.join(", "),
        reason: `Allowed by ${texts.join(", ")}.`
      }
    }
    const uncovered = analysis.commands.filter((_, i) => rules[i] === undefined).map((c) => c.words.join(" "))
    return ask(
      uncovered.length > 0
        ? `No allow rule covers ${uncovered.map((u) => `\`${u}\``).join(", ")}; running ${JSON.stringify(command.trim())} needs approval.`
        : `Running ${JSON.stringify(command.trim())} needs approval.`
    )
  }

  if (s.kind === "file") {
    const outside = s.paths.filter((p) => !where.inside(p.real) && !allowsPath(where, policy, tool, p))
    if (outside.length > 0 && !saved) {
      const shown = outside.map((p) => (p.real === p.abs ? p.abs : `${p.abs} (really ${p.real})`))
      return ask(`${tool.id} would touch ${shown.join(", ")}, outside the project; that needs approval.`)
    }
    const reads = tool.operations.includes("file.read") || tool.operations.includes("file.search")
    const secret = reads ? s.paths.filter((p) => isSensitive(p.real) && !allowsPath(where, policy, tool, p)) : []
    if (secret.length > 0 && !saved) {
      return ask(`${secret.map((p) => p.abs).join(", ")} may hold secrets; reading it needs approval.`)
    }
  }
  const allow = coveringAllow(where, policy, tool, s)
  if (allow !== undefined)
    return {
      ...base,
      behavior: "allow",
      by: "rule",
      rule: allow.rule.text,
      reason: `Allowed by ${allow.rule.text}.`
    }
  if (saved)
    return { ...base, behavior: "allow", by: "session", reason: `Approved for this session: ${s.grant.display}.` }
  if (policy.mode === "acceptEdits" && s.kind === "file" && tool.operations.includes("file.write")) {
    return {
      ...base,
      behavior: "allow",
      by: "mode",
      reason: "acceptEdits mode allows file edits inside the project."
    }
  }
  if (tool.requiresApproval) return ask(`${tool.id} requires approval for every call.`)
  if (tool.mutates) return ask(`${tool.id} changes things; this call needs approval.`)
  return { ...base, behavior: "allow", by: "declaration", reason: `${tool.id} only reads.` }
}
