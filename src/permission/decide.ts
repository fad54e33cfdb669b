/**
 * One policy's answer for one call, from what the call touches. Order:
 *   tool filter → deny rules → plan mode (nothing that mutates runs) → bypassPermissions →
 *   ask rules → a write to a control path (always asks) → a rewrite of an executable file (asks
 *   unless an allow rule names its path) → what the call touches (a shell command part by part, paths outside the project,
 *   secret files) → allow rules and saved approvals → acceptEdits → the declaration (read-only
 *   tools run, mutating ones ask).
 * A saved approval never overrides a configured ask or deny. Pure: the engine gathers the
 * subjects and the saved approvals, and combines the policies.
 */
import * as NodePath from "node:path"
import type { CheckedEntry, Tool } from "../tool/tool.ts"
import { isSensitive } from "./containment.ts"
import { controlPathAt } from "./control.ts"
import {
  type CompiledRule,
  type Decision,
  type Policy,
  refusedByPlan,
  refusedByProfile,
  refusedByRule
} from "./policy.ts"
import { matchesCommand, matchesCommandAnyPath, matchesDomain, matchesServer, namesTool } from "./rules.ts"
import { gitSecretRead, readOnlyConcern } from "./shell.ts"
import type { Subjects } from "./subjects.ts"

/** Where the project is: its root as given and as it really is, and what counts as inside it. */
export interface Where {
  readonly root: string
  readonly realRoot: string
  readonly inside: (real: string) => boolean
  /** The engine's own path matcher (its compiled globs are cached per engine). */
  readonly matchesPath: (specifier: string, root: string, abs: string) => boolean
  /** Whether known read-only commands run without a rule (permissions.readOnlyCommands). */
  readonly readOnlyCommands: boolean
  /** The secret a file (a real path) is another name of, a hard link (containment.ts's secretTwin); the engine's look. */
  readonly secretTwin?: (real: string) => string | undefined
  /**
   * The file system as the read-only list needs it, synchronously: a path's real path (links
   * followed; a missing tail kept), whether it is a folder, and a folder's names. Without it a
   * command's paths are judged as written and a glob on the list asks.
   */
  readonly files?: {
    readonly real: (abs: string) => string
    readonly directory: (abs: string) => boolean
    readonly list: (abs: string) => ReadonlyArray<string> | undefined
  }
  /** The same for the file a write's check recorded (its entry): the same look the write holds to. */
  readonly checkedSecretTwin?: (entry: { readonly dev: number; readonly ino: number }) => string | undefined
}

/** What allowed a shell command that no rule names (permissions.readOnlyCommands). */
const READ_ONLY_LIST = "the read-only command list"

/** Whether a deny or ask rule applies to any part of the call. */
export const touchesAny = (where: Where, c: CompiledRule, tool: Tool, s: Subjects): boolean => {
  if (!namesTool(c.rule, tool)) return false
  const spec = c.rule.specifier
  if (spec === undefined) return true
  switch (s.kind) {
    case "shell": {
      const pattern = c.command()
      const { candidates, opaque } = s.shell!.analysis
      // What runs cannot be known from the line: a rule that could match it applies (fail closed).
      return (
        pattern !== undefined &&
        (opaque.length > 0 || candidates.some((cand) => matchesCommandAnyPath(pattern, cand.words)))
      )
    }
    case "file":
      return s.paths.some(
        (p) => where.matchesPath(spec, where.root, p.abs) || where.matchesPath(spec, where.realRoot, p.real)
      )
    case "network":
      return s.hosts.some((h) => matchesDomain(spec, h))
    case "resource":
      return (s.servers ?? []).some((name) => matchesServer(spec, name))
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
    const servers = s.servers ?? []
    if (s.kind === "resource" && servers.length > 0 && servers.every((name) => matchesServer(spec, name))) return c
  }
  return undefined
}

/**
 * Why a file write must ask whatever the rules say: it lands on a control path (control.ts), as
 * given or as it really is. Undefined for every other call.
 */
const controlWrite = (where: Where, tool: Tool, s: Subjects): string | undefined => {
  if (s.kind !== "file" || !tool.operations.includes("file.write")) return undefined
  for (const p of s.paths) {
    const hit = controlPathAt(where.root, p.abs) ?? controlPathAt(where.realRoot, p.real)
    if (hit === undefined) continue
    const shown = p.real === p.abs ? p.abs : `${p.abs} (really ${p.real})`
    return `${shown} is a control path (${hit}): what is written there runs code or widens permissions later, outside any sandbox, so writing it always needs the person's approval, whatever the mode or allow rules. Leave it unchanged, or tell the person the exact change so they can approve it or make it themselves.`
  }
  return undefined
}

/**
 * The secret a written file is another name of: by the entry the check recorded when there is
 * one (the file the write is then held to), else by a look at the real path.
 */
const twinOf = (where: Where, p: { readonly real: string; readonly entry?: CheckedEntry | null }) =>
  p.entry === undefined
    ? where.secretTwin?.(p.real)
    : p.entry === null
      ? undefined
      : (where.checkedSecretTwin?.(p.entry) ?? where.secretTwin?.(p.real))

/** An existing regular file with an execute bit (CheckedPath.entry's mode). */
const S_IFMT = 0o170000
const S_IFREG = 0o100000
const isExecutable = (entry: CheckedEntry | null | undefined): boolean =>
  entry !== undefined && entry !== null && (entry.mode & S_IFMT) === S_IFREG && (entry.mode & 0o111) !== 0

/**
 * Why a file write must ask unless an allow rule with a path names it: it rewrites an
 * executable file, which keeps its mode (a script the person or a tool runs later). acceptEdits,
 * a bare allow rule and a saved approval do not cover it. Undefined for every other call.
 */
const executableWrite = (where: Where, policy: Policy, tool: Tool, s: Subjects): string | undefined => {
  if (s.kind !== "file" || !tool.operations.includes("file.write")) return undefined
  for (const p of s.paths) {
    if (!isExecutable(p.entry) || allowsPath(where, policy, tool, p)) continue
    const shown = p.real === p.abs ? p.abs : `${p.abs} (really ${p.real})`
    return `${shown} is an executable file: rewritten, it keeps its mode and runs whatever it then holds the next time it is run, so changing it needs the person's approval (acceptEdits and saved approvals do not cover it; an allow rule naming the path does).`
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
  // The call path's one policy (prepare.ts): a declaration that cannot say what a call touches
  // stops the call, in every mode, rather than be asked about or allowed on a guess.
  if (s.broken !== undefined) return { ...base, behavior: "deny", by: "declaration", reason: s.broken }
  const standing = refusedByProfile(policy, tool)
  if (standing !== undefined) return standing
  // Inside the sandbox its network policy holds for a target only known when it runs (`> "$f"`).
  const refused =
    s.kind === "shell"
      ? s.shell!.analysis.refusals.find((r) => !(s.shell!.sandboxed && r.includes("only known when it runs")))
      : undefined
  if (refused !== undefined)
    return {
      ...base,
      behavior: "deny",
      by: "declaration",
      reason: `This command is refused: ${refused}. ${
        /\/dev\/tcp|network/.test(refused)
          ? "Network connections through bash's /dev/tcp and /dev/udp are not allowed; use a tool made for the request."
          : "Check the quoting and the operators (;; belongs inside case), and send a command bash can parse."
      }`
    }
  const deny = policy.deny.find((c) => touchesAny(where, c, tool, s))
  if (deny !== undefined) {
    const opaque = s.kind === "shell" ? s.shell!.analysis.opaque : []
    return opaque.length > 0
      ? {
          ...refusedByRule(policy, tool, deny.rule),
          reason: `The rule ${deny.rule.text} may apply and cannot be checked: ${opaque[0]}. Write the command so every program it runs is named plainly, or do the task another way.`
        }
      : refusedByRule(policy, tool, deny.rule)
  }
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
  const control = controlWrite(where, tool, s)
  if (control !== undefined) {
    // No grant: "always" is not offered, and a saved approval does not skip it.
    return policy.mode === "dontAsk"
      ? { ...base, behavior: "deny", by: "mode", reason: `${control} dontAsk mode refuses it.` }
      : { ...base, behavior: "ask", by: "declaration", reason: control }
  }
  const executable = executableWrite(where, policy, tool, s)
  if (executable !== undefined) {
    // No grant: "always" would save the path, and the file could be made executable again after.
    return policy.mode === "dontAsk"
      ? { ...base, behavior: "deny", by: "mode", reason: `${executable} dontAsk mode refuses it.` }
      : { ...base, behavior: "ask", by: "declaration", reason: executable }
  }
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
    // Deny and ask rules were decided above; inside the boundary nothing else needs a person,
    // but a secret's committed copy, which the sandbox cannot hide (shell/git-secrets.ts).
    const fromHistory = sandboxed ? analysis.candidates.map(gitSecretRead).find((w) => w !== undefined) : undefined
    if (fromHistory !== undefined)
      return ask(
        `Inside the sandbox, but ${fromHistory}: git prints its committed copy from .git, which the sandbox cannot hide. Running ${JSON.stringify(command.trim())} needs approval.`
      )
    if (sandboxed)
      return {
        ...base,
        behavior: "allow",
        by: "sandbox",
        reason: "Runs inside the OS sandbox (writes only inside the project, network only to allowed domains)."
      }
    if (analysis.concerns.length > 0) return ask(`This command needs approval: ${analysis.concerns.join("; ")}.`)
    // Each part is covered by an allow rule or, when the mode runs them, by the read-only list.
    // As the read tool judges a path: as it really is (a link in the project to ~/.ssh/id_rsa,
    // or to .env, is that file) and by what it is (a hard link to a secret under another name).
    const files = where.files
    const readable = (p: string) => {
      const abs = NodePath.resolve(where.root, p)
      if (!where.inside(abs) || isSensitive(abs)) return false
      if (files === undefined) return true
      const real = files.real(abs)
      return where.inside(real) && !isSensitive(real) && where.secretTwin?.(real) === undefined
    }
    const look =
      files === undefined
        ? { readable }
        : {
            readable,
            directory: (p: string) => files.directory(NodePath.resolve(where.root, p)),
            list: (p: string) => files.list(NodePath.resolve(where.root, p))
          }
    const readOnly =
      where.readOnlyCommands &&
      (policy.mode === "default" || policy.mode === "acceptEdits") &&
      analysis.inputs.every((i) => i.shape === "literal" && readable(i.value))
    const rules = analysis.commands.map((cmd) => {
      const rule = policy.allow.find((c) => {
        if (!namesTool(c.rule, tool)) return false
        const pattern = c.command()
        return pattern !== undefined && matchesCommand(pattern, cmd.words)
      })
      if (rule !== undefined || !readOnly) return rule?.rule.text
      return readOnlyConcern(cmd, look) === undefined ? READ_ONLY_LIST : undefined
    })
    if (analysis.commands.length > 0 && rules.every((r) => r !== undefined)) {
      const texts = [...new Set(rules)].filter((r) => r !== READ_ONLY_LIST)
      const listed = rules.includes(READ_ONLY_LIST) ? ` and ${READ_ONLY_LIST}` : ""
      return texts.length === 0
        ? { ...base, behavior: "allow", by: "mode", reason: `Allowed by ${READ_ONLY_LIST}.` }
        : {
            ...base,
            behavior: "allow",
            by: "rule",
            rule: texts.join(", "),
            reason: `Allowed by ${texts.join(", ")}${listed}.`
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
    // A change reads the file too, and shows it: edit's "closest text" on a miss, a diff.
    const writes = tool.operations.includes("file.write")
    const secret =
      reads || writes
        ? s.paths.filter(
            (p) =>
              (isSensitive(p.real) || (writes && twinOf(where, p) !== undefined)) && !allowsPath(where, policy, tool, p)
          )
        : []
    if (secret.length > 0 && !saved) {
      return ask(
        `${secret.map((p) => p.abs).join(", ")} may hold secrets; ${writes ? "changing" : "reading"} it needs approval.`
      )
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
  // A program is never approved as a whole: each call it makes takes this path and is decided alone.
  if (tool.operations.includes("program.run"))
    return {
      ...base,
      behavior: "allow",
      by: "declaration",
      reason: `${tool.id}: each call it makes is decided on its own.`
    }
  if (tool.mutates) return ask(`${tool.id} changes things; this call needs approval.`)
  return { ...base, behavior: "allow", by: "declaration", reason: `${tool.id} only reads.` }
}
