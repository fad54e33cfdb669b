/**
 * The permission engine: allow / ask / deny for one call, from the configured rules, the mode,
 * the session's saved approvals and the tool's declaration (never its name). One policy's
 * answer is decide.ts's; across policies (the project's, then each profile a sub-agent runs
 * under) the strictest answer wins, so a profile can only narrow what its parent allows.
 */
import { Context, Effect, Layer, Option, Path } from "effect"
import { ConfigError, FreecodeConfig, sectionOf } from "../config/load.ts"
import { LocalFs } from "../fs/local-fs.ts"
import { Sandbox } from "../sandbox/sandbox.ts"
import { GrantStore } from "../session/grants.ts"
import { sessionsOrOwn } from "../session/sessions.ts"
import type { Searchability, Searchable, Tool, ToolContext } from "../tool/tool.ts"
import { Workspace } from "../tool/workspace.ts"
import { type PermissionMode, type ProfileConfig, permissionsSection, profilesSection } from "./config.ts"
import { checkedSecretTwin, isSensitive, realPath, secretTwin, shellFiles, within } from "./containment.ts"
import { allowsPath, decideOne, type Where } from "./decide.ts"
import {
  alwaysRefused,
  BUILTIN_PROFILES,
  type CompiledRule,
  compileAll,
  type Decision,
  type Grant,
  type Policy,
  toolFilter
} from "./policy.ts"
import { makePathMatcher, namesTool, type RuleBehavior } from "./rules.ts"
import { type Grammar, subjectsOf } from "./subjects.ts"

export { BUILTIN_PROFILES, type CompiledRule, type Decision, type Grant, type Policy } from "./policy.ts"

export interface PermissionRequest {
  readonly tool: Tool
  /** Decoded arguments. */
  readonly args: unknown
  readonly ctx: ToolContext
  /** What the call touches, when the caller has asked the tool already (the call path's prepare). */
  readonly paths?: ReadonlyArray<string>
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
  /**
   * The refusal every call of `tool` gets under the project's policy narrowed by `profiles`,
   * whatever its arguments; undefined when some call could run. What the surface hides.
   */
  readonly alwaysRefused: (tool: Tool, profiles?: ReadonlyArray<Policy>) => Decision | undefined
  /** The project's policy, compiled from freecode.json. */
  readonly project: Policy
}

/**
 * The mode when freecode.json sets no `permissions.defaultMode`. `mcp` sets `acceptEdits`: its
 * client shows the person every call, so an edit inside the project needs no second gate there.
 */
export const DefaultMode = Context.Reference<PermissionMode>("freecode/DefaultMode", {
  defaultValue: () => "default"
})

export class PermissionEngine extends Context.Service<PermissionEngine, PermissionEngineShape>()(
  "freecode/PermissionEngine"
) {
  static readonly layer = Layer.effect(
    PermissionEngine,
    Effect.gen(function* () {
      const config = yield* FreecodeConfig
      const sandbox = yield* Sandbox
      const { root } = yield* Workspace
      const path = yield* Path.Path
      const localFs = yield* LocalFs
      const matchesPath = makePathMatcher()
      // The bash grammar is loaded on the first shell call, not when the system starts.
      const grammar: Grammar = { loaded: undefined }
      const parser = () => {
        if (grammar.loaded === undefined) throw new Error("the bash grammar is not loaded yet")
        return grammar.loaded
      }
      const perms = sectionOf(config, permissionsSection) ?? {}
      const file = config.file ?? "freecode.json"

      const realRoot = yield* realPath(localFs, root)
      const extraDirs = yield* Effect.forEach(perms.additionalDirectories ?? [], (d) =>
        realPath(localFs, path.resolve(root, d.startsWith("~/") ? path.join(process.env.HOME ?? "~", d.slice(2)) : d))
      )
      const inside = (real: string) => within(realRoot, real) || extraDirs.some((d) => within(d, real))
      const twinRoots = [realRoot, ...extraDirs]

      const noBypass = perms.disableBypassPermissionsMode === "disable"
      const bypassDisabled = (at: string) =>
        new ConfigError({
          message: `${at}: bypassPermissions mode is disabled (permissions.disableBypassPermissionsMode is "disable"); choose another mode.`
        })
      if (noBypass && perms.defaultMode === "bypassPermissions") {
        return yield* bypassDisabled(`${file}: permissions.defaultMode`)
      }

      const makeProfile: (name: string, p: ProfileConfig) => Effect.Effect<Policy, ConfigError> = Effect.fn(
        "PermissionEngine.makeProfile"
      )(function* (name: string, p: ProfileConfig) {
        const at = `${file}: profiles.${name}`
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
        mode: perms.defaultMode ?? (yield* DefaultMode),
        allow: yield* compileAll(parser, perms.allow, `${file}: permissions.allow`),
        ask: yield* compileAll(parser, perms.ask, `${file}: permissions.ask`),
        deny: yield* compileAll(parser, perms.deny, `${file}: permissions.deny`),
        tools: () => true
      }
      const profiles = new Map<string, Policy>()
      for (const [name, p] of Object.entries({ ...BUILTIN_PROFILES, ...sectionOf(config, profilesSection) })) {
        profiles.set(name, yield* makeProfile(name, p))
      }

      // Saved approvals: in memory, and in the session database when the system has one, so
      // a resumed session does not ask again. Memory also caches what the database said yes to;
      // it leaves with the session (the database keeps its rows).
      const persisted = yield* Effect.serviceOption(GrantStore)
      const grants = (yield* sessionsOrOwn).slot<Set<string>>("grants")
      const grantKey = (g: Grant) => `${g.tool}\u0000${g.key}`
      const remember = (sessionId: string, g: Grant) => {
        grants.getOrCreate(sessionId, () => new Set<string>()).add(grantKey(g))
      }
      const authoritative = Option.isSome(persisted) && persisted.value.authoritative === true
      const granted = (sessionId: string, g: Grant): Effect.Effect<boolean> => {
        if (!authoritative && grants.get(sessionId)?.has(grantKey(g)) === true) return Effect.succeed(true)
        if (Option.isNone(persisted)) return Effect.succeed(false)
        if (authoritative) return persisted.value.has(sessionId, grantKey(g))
        return Effect.tap(persisted.value.has(sessionId, grantKey(g)), (yes) =>
          Effect.sync(() => (yes ? remember(sessionId, g) : undefined))
        )
      }

      const where: Where = {
        root,
        realRoot,
        inside,
        matchesPath,
        readOnlyCommands: perms.readOnlyCommands !== false,
        secretTwin: (real) => secretTwin(real, twinRoots),
        files: shellFiles,
        checkedSecretTwin: (entry) => checkedSecretTwin(entry, twinRoots)
      }

      const RANK: Record<RuleBehavior, number> = { allow: 0, ask: 1, deny: 2 }

      const decide = (req: PermissionRequest, chain: ReadonlyArray<Policy> = []) =>
        // Suspended: a bug that throws while the subjects are gathered is a defect of this effect.
        Effect.flatMap(
          Effect.suspend(() => subjectsOf(grammar, localFs, realRoot, req, sandbox)),
          (s) =>
            Effect.map(granted(req.ctx.sessionId, s.grant), (saved) => {
              let worst = decideOne(where, project, req.tool, s, saved)
              for (const policy of chain) {
                if (worst.behavior === "deny") break
                const d = decideOne(where, policy, req.tool, s, saved)
                if (RANK[d.behavior] > RANK[worst.behavior]) worst = d
              }
              return s.kind === "file" && s.paths.length > 0 ? { ...worst, checked: s.paths } : worst
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
          if (!secrets || !(isSensitive(abs) || secretTwin(abs, twinRoots) !== undefined)) return "ok"
          const file = { abs, real: abs }
          return policies.some((p) => p.mode !== "bypassPermissions" && !allowsPath(where, p, tool, file))
            ? "secret"
            : "ok"
        }
      }

      return PermissionEngine.of({
        decide,
        searchable,
        alwaysRefused: (tool, chain = []) => alwaysRefused([project, ...chain], tool),
        project,
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
