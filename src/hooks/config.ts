/**
 * The `hooks` section of freecode.json, in Claude Code's shape. A matcher is a regular
 * expression over the tool name; one that does not compile is refused when the file is read
 * (it used to load and then match nothing, so the hook silently never ran).
 */
import { Schema } from "effect"
import { defineSection } from "../config/section.ts"

export const CommandHookConfig = Schema.Struct({
  type: Schema.Literal("command"),
  command: Schema.String.check(Schema.isNonEmpty()),
  /** Seconds, as in Claude Code. Default 60. */
  timeout: Schema.optionalKey(Schema.Finite.check(Schema.isGreaterThan(0)))
})
export type CommandHookConfig = typeof CommandHookConfig.Type

/** Why `matcher` is not a usable regular expression, or undefined when it is one. */
export const matcherProblem = (matcher: string): string | undefined => {
  if (matcher === "" || matcher === "*") return undefined
  try {
    new RegExp(`^(?:${matcher})$`, "i")
    return undefined
  } catch (e) {
    return `"${matcher}" is not a valid regular expression (${(e as Error).message.replace(/^Invalid regular expression: /, "")}); write a tool name, A|B, a regular expression, or * for every tool.`
  }
}

export const HookMatcherConfig = Schema.Struct({
  /** A tool name, `A|B`, a regular expression, or `*` / empty / absent for every tool. */
  matcher: Schema.optionalKey(Schema.String.check(Schema.makeFilter((m: string) => matcherProblem(m)))),
  hooks: Schema.Array(CommandHookConfig)
})
export type HookMatcherConfig = typeof HookMatcherConfig.Type

export const HooksConfig = Schema.Struct({
  PreToolUse: Schema.optionalKey(Schema.Array(HookMatcherConfig)),
  PostToolUse: Schema.optionalKey(Schema.Array(HookMatcherConfig))
})
export type HooksConfig = typeof HooksConfig.Type

const EVENTS = ["PreToolUse", "PostToolUse"] as const

const count = (value: HooksConfig) =>
  EVENTS.reduce((n, e) => n + (value[e] ?? []).reduce((m, matcher) => m + matcher.hooks.length, 0), 0)

export const hooksSection = defineSection<HooksConfig, "hooks">({
  key: "hooks",
  schema: HooksConfig,
  knownKeys: {
    hooks: [...EVENTS],
    "hooks.PreToolUse[]": ["matcher", "hooks"],
    "hooks.PostToolUse[]": ["matcher", "hooks"],
    "hooks.PreToolUse[].hooks[]": ["type", "command", "timeout"],
    "hooks.PostToolUse[].hooks[]": ["type", "command", "timeout"]
  },
  // Every file's hooks run: the person's first, then the project's.
  merge: (lower, upper) => {
    const out: Record<string, ReadonlyArray<HookMatcherConfig>> = {}
    for (const e of EVENTS) {
      const joined = [...(lower[e] ?? []), ...(upper[e] ?? [])]
      if (joined.length > 0) out[e] = joined
    }
    return out
  },
  withoutPrograms: (value) => {
    const n = count(value)
    return { kept: undefined, skipped: n === 0 ? [] : [`${n} hook${n === 1 ? "" : "s"}`] }
  }
})
