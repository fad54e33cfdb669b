/**
 * One top-level key of freecode.json, owned by the feature that reads it (permission, hooks,
 * mcp, lsp, surface). This folder knows no feature: the full schema is the list of sections the
 * composition hands to `loadConfig`, so no feature's config folder-cycles back through here.
 */
import type { Schema } from "effect"

/** A tool as the checks see it: its name and what it declares it does. */
export interface KnownTool {
  readonly id: string
  readonly operations: ReadonlyArray<string>
}

/** What of a section starts programs, and what is left when those are taken out. */
export interface ProgramsSplit<A> {
  /** The value without what starts programs; undefined when nothing is left. */
  readonly kept: A | undefined
  /** What was left out, in a few words each ("2 hooks", "MCP servers a, b"). */
  readonly skipped: ReadonlyArray<string>
}

export interface ConfigSection<A, K extends string = string> {
  /** The top-level key in freecode.json. */
  readonly key: K
  readonly schema: Schema.Decoder<A>
  /**
   * The keys each object of the section may hold, for the "unknown key" message. Keyed by the
   * path from the top: `hooks` the section itself, `hooks.PreToolUse[]` any index, `profiles.*` any name.
   */
  readonly knownKeys: Readonly<Record<string, ReadonlyArray<string>>>
  /** One file's value under another's: `lower` the person's own, `upper` the project's. Default: upper replaces. */
  readonly merge?: (lower: A, upper: A) => A
  /** In a folder that is not trusted, what of the project's value may run (nothing that starts a program). */
  readonly withoutPrograms?: (value: A) => ProgramsSplit<A>
  /** Another file at the root that holds this section (only such sections), read under freecode.json: `.mcp.json`. */
  readonly alsoIn?: string
  /** Checks that need the tools that exist: each problem as `key.path: message`, the path from the top. */
  readonly checkTools?: (value: A, tools: ReadonlyArray<KnownTool>) => ReadonlyArray<string>
}

/** A section, typed by its schema and its key. */
export const defineSection = <A, K extends string>(section: ConfigSection<A, K>): ConfigSection<A, K> => section
