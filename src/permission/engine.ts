/**
 * The permission engine: allow / ask / deny for one call, from the configured rules, the mode,
 * the session's saved approvals and the tool's declaration (never its name).
 *
 * Order, per policy (the project's, then each profile a sub-agent runs under):
 *   tool filter → deny rules → plan mode (nothing that mutates runs) → bypassPermissions →
 *   ask rules → what the call touches (a shell command part by part, paths outside the project,
 *   secret files) → allow rules and saved approvals → acceptEdits → the declaration (read-only
 *   tools run, mutating ones ask).
 * A saved approval never overrides a configured ask or deny. Across policies the strictest
 * answer wins, so a profile can only narrow what its parent allows.
 */
import { Context, Effect, Layer, Option, Path } from "effect"
import { ConfigError, FreecodeConfig, sectionOf } from "../config/load.ts"
import { LocalFs } from "../fs/local-fs.ts"
import { GrantStore } from "../session/grants.ts"
import { changesNothing } from "../tool/read-only.ts"
import type { Searchability, Searchable, Tool, ToolContext } from "../tool/tool.ts"
import { Workspace } from "../tool/workspace.ts"
import { resolvePath } from "../tools/paths.ts"
import { type PermissionMode, type ProfileConfig, permissionsSection, profilesSection } from "./config.ts"
import { isSensitive, realPath, realPathBelow, within } from "./containment.ts"
import {
  type CommandPattern,
  commandSpecifier,
  type Kind,
  kindOf,
  makePathMatcher,
  matchesCommand,
  matchesCommandAnyPath,
  matchesDomain,
  namesTool,
  parseRule,
  type Rule,
  type RuleBehavior
} from "./rules.ts"
import { analyzeWith, bashParser, readOnlyConcern, ruleWords, type ShellAnalysis, type ShellParser } from "./shell.ts"

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
  readonly by: "rule" | "mode" | "session" | "declaration" | "profile" | "hook" | "person" | "error"
  /** The configured rule that decided it, when one did. */
  readonly rule?: string
  /** The policy that decided it: "project" or a profile's name. */
  readonly policy: string
  /** What an "always" answer would save; absent when a configured ask rule decided (always is not offered). */
  readonly grant?: Grant
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

export interface PermissionRequest {
  readonly tool: Tool
  /** Decoded arguments. */
  readonly args: unknown
  readonly ctx: ToolContext
}

export interface PermissionEngineShape {
  /** The decision for one call under the project's policy narrowed by `profiles` (in order). */
  readonly decide: (request: PermissionRequest, profiles?: ReadonlyArray<Policy>) => Effect.Effect<Decision>
  /** Saves an "always" answer for the rest of the session. */
  readonly grant: (sessionId: string, grant: Grant) => Effect.Effect<void>
  /** A profile by name (from freecode.json, or the built-in `read-only` and `plan`). */
  readonly profile: (name: string) => Effect.Effect<Policy, ConfigError>
  /** Compiles a profile given in code. */
  readonly makeProfile: (name: string, config: ProfileConfig) => Effect.Effect<Policy, ConfigError>
  /** The project policy's mode. */
  readonly mode: PermissionMode
  /**
   * What a search by `tool` may show of a file it found, under the project's policy narrowed by
   * `profiles`: "denied" when a deny rule names the file (Read(./secrets/**) hides it from grep,
   * glob and ls as from read), "secret" when it is a .env-like file that no allow rule or mode
   * lets be read without asking.
   */
  readonly searchable: (tool: Tool, profiles?: ReadonlyArray<Policy>) => Searchability
}

const compile = (parser: () => ShellParser, text: string, where: string): CompiledRule | ConfigError => {
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

const compileAll = (parser: () => ShellParser, texts: ReadonlyArray<string> | undefined, where: string) =>
  Effect.forEach(texts ?? [], (text, i) => {
    const c = compile(parser, text, `${where}[${i}]`)
    return c instanceof ConfigError ? Effect.fail(c) : Effect.succeed(c)
  })

const toolFilter = (tools: ProfileConfig["tools"]): ((tool: Tool) => boolean) => {
  if (tools === undefined || tools === "all") return () => true
  if (tools === "read-only") return changesNothing
  const names = new Set(tools.map((t) => t.toLowerCase()))
  return (tool) => names.has(tool.id.toLowerCase())
}

export const BUILTIN_PROFILES: Readonly<Record<string, ProfileConfig>> = {
  /** Only tools that change nothing (tool/read-only.ts): not even the session's memory or todo list. */
  "read-only": { tools: "read-only" },
  /** Plan mode: everything may be looked at, nothing that mutates runs. */
  plan: { mode: "plan" }
}

/** What a call touches, as the rules see it. */
interface Subjects {
  readonly kind: Kind
  readonly shell?: { readonly command: string; readonly analysis: ShellAnalysis }
  /** File tools: each path as given (absolute) and as it really is. */
  readonly paths: ReadonlyArray<{ readonly abs: string; readonly real: string }>
  /** Fetch tools: hosts. */
  readonly hosts: ReadonlyArray<string>
  /** Set when the declaration failed to list what the call touches: the call then asks. */
  readonly unknown?: string
  readonly grant: Grant
}

/** What allowed a shell command that no rule names (permissions.readOnlyCommands). */
const READ_ONLY_LIST = "the read-only command list"

const canonical = (value: unknown): string =>
  JSON.stringify(value, (_, v) =>
    v !== null && typeof v === "object" && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : 1)))
      : v
  ) ?? "null"

export class PermissionEngine extends Context.Service<PermissionEngine, PermissionEngineShape>()(
  "freecode/PermissionEngine"
) {
  static readonly layer = Layer.effect(
    PermissionEngine,
    Effect.gen(function* () {
      const config = yield* FreecodeConfig
      const { root } = yield* Workspace
      const path = yield* Path.Path
      const localFs = yield* LocalFs
      const matchesPath = makePathMatcher()
      // The bash grammar is loaded on the first shell call, not when the system starts.
      let loaded: ShellParser | undefined
      const parser = () => {
        if (loaded === undefined) throw new Error("the bash grammar is not loaded yet")
        return loaded
      }
      const perms = sectionOf(config, permissionsSection) ?? {}
      const where = config.file ?? "freecode.json"

      const realRoot = yield* realPath(localFs, root)
      const extraDirs = yield* Effect.forEach(perms.additionalDirectories ?? [], (d) =>
        realPath(localFs, path.resolve(root, d.startsWith("~/") ? path.join(process.env.HOME ?? "~", d.slice(2)) : d))
      )
      const inside = (real: string) => within(realRoot, real) || extraDirs.some((d) => within(d, real))

      const noBypass = perms.disableBypassPermissionsMode === "disable"
      const bypassDisabled = (at: string) =>
        new ConfigError({
          message: `${at}: bypassPermissions mode is disabled (permissions.disableBypassPermissionsMode is "disable"); choose another mode.`
        })
      if (noBypass && perms.defaultMode === "bypassPermissions") {
        return yield* bypassDisabled(`${where}: permissions.defaultMode`)
      }

      const makeProfile = (name: string, p: ProfileConfig): Effect.Effect<Policy, ConfigError> =>
        Effect.gen(function* () {
          const at = `${where}: profiles.${name}`
          if (noBypass && p.mode === "bypassPermissions") return yield* bypassDisabled(`${at}.mode`)
          return {
            name,
            mode: p.mode ?? "default",
            allow: yield* compileAll(parser, p.allow, `${at}.allow`),
            ask: yield* compileAll(parser, p.ask, `${at}.ask`),
            deny: yield* compileAll(parser, p.deny, `${at}.deny`),
            tools: toolFilter(p.tools)
          }
        })

      const project: Policy = {
        name: "project",
        mode: perms.defaultMode ?? "default",
        allow: yield* compileAll(parser, perms.allow, `${where}: permissions.allow`),
        ask: yield* compileAll(parser, perms.ask, `${where}: permissions.ask`),
        deny: yield* compileAll(parser, perms.deny, `${where}: permissions.deny`),
        tools: () => true
      }
      const profiles = new Map<string, Policy>()
      for (const [name, p] of Object.entries({ ...BUILTIN_PROFILES, ...sectionOf(config, profilesSection) })) {
        profiles.set(name, yield* makeProfile(name, p))
      }

      // Saved approvals: in memory, and in the session database when the system has one, so
      // a resumed session does not ask again. Memory also caches what the database said yes to.
      const persisted = yield* Effect.serviceOption(GrantStore)
      const grants = new Map<string, Set<string>>()
      const grantKey = (g: Grant) => `${g.tool}\u0000${g.key}`
      const remember = (sessionId: string, g: Grant) => {
        const set = grants.get(sessionId) ?? new Set<string>()
        set.add(grantKey(g))
        grants.set(sessionId, set)
      }
      const granted = (sessionId: string, g: Grant): Effect.Effect<boolean> => {
        if (grants.get(sessionId)?.has(grantKey(g)) === true) return Effect.succeed(true)
        if (Option.isNone(persisted)) return Effect.succeed(false)
        return Effect.tap(persisted.value.has(sessionId, grantKey(g)), (yes) =>
          Effect.sync(() => (yes ? remember(sessionId, g) : undefined))
        )
      }

      const shellSubjects = (id: string, args: unknown): Effect.Effect<Subjects> =>
        Effect.gen(function* () {
          const command =
            typeof (args as { command?: unknown })?.command === "string" ? (args as { command: string }).command : ""
          loaded ??= yield* bashParser
          const analysis = analyzeWith(loaded, command)
          // One plain simple command is saved as its words, as a rule would match it: `npm  test`
          // and `npm 'test'` are the approved `npm test`. Anything else is saved as its exact text.
          const only =
            analysis.concerns.length === 0 && analysis.commands.length === 1 ? analysis.commands[0] : undefined
          const plain = only !== undefined && !only.dynamic && only.words.length > 0 ? only.words : undefined
          const text = plain === undefined ? command.trim() : plain.join(" ")
          return {
            kind: "shell",
            shell: { command, analysis },
            paths: [],
            hosts: [],
            grant: {
              tool: id,
              key: plain === undefined ? `cmd:${text}` : `argv:${JSON.stringify(plain)}`,
              display: `${id}(${text})`
            }
          }
        })

      const fileSubjects = (id: string, paths: ReadonlyArray<{ abs: string; real: string }>): Subjects => {
        const reals = paths.length === 1 ? [paths[0]!.real] : [...new Set(paths.map((p) => p.real))].sort()
        return {
          kind: "file",
          paths,
          hosts: [],
          grant: { tool: id, key: `paths:${reals.join("\n")}`, display: `${id}(${reals.join(", ")})` }
        }
      }

      // (Effects chained, not a generator, but for a shell command: every call passes through here.)
      const subjectsOf = (req: PermissionRequest): Effect.Effect<Subjects> => {
        const { tool, args, ctx } = req
        const kind = kindOf(tool)
        const id = tool.id
        if (kind === "shell") return shellSubjects(id, args)
        let declared: ReadonlyArray<string>
        try {
          declared = tool.paths(args, ctx)
        } catch (e) {
          // A declaration that cannot say what it touches is treated as touching the unknown.
          const reason = `${id} could not say which paths it touches (${e instanceof Error ? e.message : String(e)})`
          return Effect.succeed({
            kind,
            paths: [],
            hosts: [],
            unknown: reason,
            grant: { tool: id, key: `args:${canonical(args)}`, display: id }
          })
        }
        if (kind === "file") {
          const located = (p: string) => {
            const abs = resolvePath(ctx.root, p)
            return Effect.map(realPathBelow(localFs, realRoot, abs), (real) => ({ abs, real }))
          }
          // Most calls touch one path: no forEach for it.
          return declared.length === 1
            ? Effect.map(located(declared[0]!), (p) => fileSubjects(id, [p]))
            : Effect.map(Effect.forEach(declared, located), (paths) => fileSubjects(id, paths))
        }
        if (kind === "network") {
          const hosts = [...new Set(declared.map((h) => h.toLowerCase()))].sort()
          return Effect.succeed({
            kind,
            paths: [],
            hosts,
            grant: {
              tool: id,
              key: `hosts:${hosts.join(" ")}`,
              display: `${id}(${hosts.map((h) => `domain:${h}`).join(", ")})`
            }
          })
        }
        const json = canonical(args)
        return Effect.succeed({
          kind,
          paths: [],
          hosts: [],
          grant: { tool: id, key: `args:${json}`, display: `${id}(${json})` }
        })
      }

      /** Whether a deny or ask rule applies to any part of the call. */
      const touchesAny = (c: CompiledRule, tool: Tool, s: Subjects): boolean => {
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
            return s.paths.some((p) => matchesPath(spec, root, p.abs) || matchesPath(spec, realRoot, p.real))
          case "network":
            return s.hosts.some((h) => matchesDomain(spec, h))
          default:
            return false
        }
      }

      /** An allow rule with a path that covers this (real) path. */
      const allowsPath = (policy: Policy, tool: Tool, p: { abs: string; real: string }) =>
        policy.allow.some(
          (c) =>
            c.rule.specifier !== undefined && namesTool(c.rule, tool) && matchesPath(c.rule.specifier, realRoot, p.real)
        )

      /** Whether an allow rule covers the whole call. */
      const coveringAllow = (policy: Policy, tool: Tool, s: Subjects): CompiledRule | undefined => {
        for (const c of policy.allow) {
          if (!namesTool(c.rule, tool)) continue
          const spec = c.rule.specifier
          if (spec === undefined) return c
          if (s.kind === "file" && s.paths.length > 0 && s.paths.every((p) => matchesPath(spec, realRoot, p.real)))
            return c
          if (s.kind === "network" && s.hosts.length > 0 && s.hosts.every((h) => matchesDomain(spec, h))) return c
        }
        return undefined
      }

      const decideOne = (policy: Policy, req: PermissionRequest, s: Subjects, saved: boolean): Decision => {
        const { tool } = req
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
        if (!policy.tools(tool)) {
          return {
            ...base,
            behavior: "deny",
            by: "profile",
            reason: `${tool.id} is not available to this agent (profile ${policy.name}). Use the tools you were given.`
          }
        }
        const deny = policy.deny.find((c) => touchesAny(c, tool, s))
        if (deny !== undefined) {
          return {
            ...base,
            behavior: "deny",
            by: "rule",
            rule: deny.rule.text,
            reason:
              s.kind === "shell" && s.shell!.analysis.opaque.length > 0
                ? `The rule ${deny.rule.text} may apply and cannot be checked: ${s.shell!.analysis.opaque[0]}. Write the command so every program it runs is named plainly, or do the task another way.`
                : `The rule ${deny.rule.text} denies this ${tool.id} call. Do not retry it; do the task another way.`
          }
        }
        // `agent` is the exception: its child runs under this same policy (profiles chain), so
        // plan mode holds for every call the child makes, and a planner may still explore.
        if (policy.mode === "plan" && tool.mutates && !tool.operations.includes("agent.spawn")) {
          return {
            ...base,
            behavior: "deny",
            by: "mode",
            reason: `Plan mode: ${tool.id} changes things, so it does not run now. Describe the change in your plan instead.`
          }
        }
        if (policy.mode === "bypassPermissions") {
          return {
            ...base,
            behavior: "allow",
            by: "mode",
            reason: "bypassPermissions mode allows everything that no deny rule refuses."
          }
        }
        const askRule = policy.ask.find((c) => touchesAny(c, tool, s))
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
          const { analysis, command } = s.shell!
          if (analysis.concerns.length > 0) return ask(`This command needs approval: ${analysis.concerns.join("; ")}.`)
          // Each part is covered by an allow rule or, when the mode runs them, by the read-only list.
          const readable = (p: string) => {
            const abs = path.resolve(req.ctx.root, p)
            return inside(abs) && !isSensitive(abs)
          }
          const readOnly =
            perms.readOnlyCommands !== false &&
            (policy.mode === "default" || policy.mode === "acceptEdits") &&
            analysis.inputs.every((i) => i.shape === "literal" && readable(i.value))
          const rules = analysis.commands.map((cmd) => {
            const rule = policy.allow.find((c) => {
              if (!namesTool(c.rule, tool)) return false
              const pattern = c.command()
              return pattern !== undefined && matchesCommand(pattern, cmd.words)
            })
            if (rule !== undefined || !readOnly) return rule?.rule.text
            return readOnlyConcern(cmd, readable) === undefined ? READ_ONLY_LIST : undefined
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
          const outside = s.paths.filter((p) => !inside(p.real) && !allowsPath(policy, tool, p))
          if (outside.length > 0 && !saved) {
            const shown = outside.map((p) => (p.real === p.abs ? p.abs : `${p.abs} (really ${p.real})`))
            return ask(`${tool.id} would touch ${shown.join(", ")}, outside the project; that needs approval.`)
          }
          const reads = tool.operations.includes("file.read") || tool.operations.includes("file.search")
          const secret = reads ? s.paths.filter((p) => isSensitive(p.real) && !allowsPath(policy, tool, p)) : []
          if (secret.length > 0 && !saved) {
            return ask(`${secret.map((p) => p.abs).join(", ")} may hold secrets; reading it needs approval.`)
          }
        }
        const allow = coveringAllow(policy, tool, s)
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

      const RANK: Record<RuleBehavior, number> = { allow: 0, ask: 1, deny: 2 }

      const decide = (req: PermissionRequest, chain: ReadonlyArray<Policy> = []) =>
        // Suspended: a bug that throws while the subjects are gathered is a defect of this effect.
        Effect.flatMap(
          Effect.suspend(() => subjectsOf(req)),
          (s) =>
            Effect.map(granted(req.ctx.sessionId, s.grant), (saved) => {
              let worst = decideOne(project, req, s, saved)
              for (const policy of chain) {
                if (worst.behavior === "deny") break
                const d = decideOne(policy, req, s, saved)
                if (RANK[d.behavior] > RANK[worst.behavior]) worst = d
              }
              return worst
            })
        )

      const searchable = (tool: Tool, chain: ReadonlyArray<Policy> = []) => {
        const policies = [project, ...chain]
        // Once per call, at its first path (most calls are not searches and never ask): the deny
        // rules that can hide a path from this tool.
        let denies: ReadonlyArray<CompiledRule> | undefined
        return (abs: string, secrets = true): Searchable => {
          denies ??= policies.flatMap((policy) =>
            policy.deny.filter((c) => c.rule.specifier !== undefined && namesTool(c.rule, tool))
          )
          for (const c of denies) {
            const spec = c.rule.specifier!
            if (matchesPath(spec, root, abs) || matchesPath(spec, realRoot, abs)) return "denied"
          }
          if (!secrets || !isSensitive(abs)) return "ok"
          const file = { abs, real: abs }
          return policies.some((p) => p.mode !== "bypassPermissions" && !allowsPath(p, tool, file)) ? "secret" : "ok"
        }
      }

      return PermissionEngine.of({
        decide,
        searchable,
        grant: (sessionId, g) =>
          Effect.andThen(
            Effect.sync(() => remember(sessionId, g)),
            Option.isSome(persisted) ? persisted.value.add(sessionId, grantKey(g), g.display) : Effect.void
          ),
        profile: (name) => {
          const p = profiles.get(name)
          return p === undefined
            ? Effect.fail(
                new ConfigError({
                  message: `No profile named "${name}". Known profiles: ${[...profiles.keys()].join(", ")}.`
                })
              )
            : Effect.succeed(p)
        },
        makeProfile,
        mode: project.mode
      })
    })
  )
}
