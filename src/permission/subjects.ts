/**
 * What a call touches, as the rules see it: a shell command (parsed), the paths a file tool
 * declares (as given and as they really are), the hosts a fetch tool declares — and the grant
 * an "always" answer would save for it.
 */
import { Effect } from "effect"
import type { LocalFsShape } from "../fs/local-fs.ts"
import { dirnameOf, resolvePath } from "../path/path.ts"
import { Sandbox, type SandboxShape, sandboxAllows } from "../sandbox/sandbox.ts"
import type { CheckedEntry, CheckedPath, Tool, ToolContext } from "../tool/tool.ts"
import { realPathBelow } from "./containment.ts"
import type { Grant } from "./policy.ts"
import { type Kind, kindOf } from "./rules.ts"
import { analyzeWith, bashParser, type ShellAnalysis, type ShellParser } from "./shell.ts"

/** What a call touches, as the rules see it. */
export interface Subjects {
  readonly kind: Kind
  readonly shell?: {
    readonly command: string
    readonly analysis: ShellAnalysis
    /** It runs inside the OS sandbox, whose settings allow it without asking. */
    readonly sandboxed: boolean
  }
  /** File tools: each path as given (absolute) and as it really is; for a write, what is there (CheckedPath.entry). */
  readonly paths: ReadonlyArray<CheckedPath>
  /** Fetch tools: hosts. */
  readonly hosts: ReadonlyArray<string>
  /** Tools that read MCP resources: the servers. */
  readonly servers?: ReadonlyArray<string>
  /**
   * Set when the declaration threw instead of listing what the call touches: the call is refused
   * (the call path's one policy, prepare.ts: it never runs on a guess).
   */
  readonly broken?: string
  readonly grant: Grant
}

const canonical = (value: unknown): string =>
  JSON.stringify(value, (_, v) =>
    v !== null && typeof v === "object" && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : 1)))
      : v
  ) ?? "null"

/** The bash grammar, loaded on the first shell call (not when the system starts). */
export interface Grammar {
  loaded: ShellParser | undefined
}

export interface SubjectsRequest {
  readonly tool: Tool
  readonly args: unknown
  readonly ctx: ToolContext
  /** What the call touches, when the caller asked the tool already. */
  readonly paths?: ReadonlyArray<string>
}

const shellSubjects = Effect.fnUntraced(function* (
  grammar: Grammar,
  sandbox: SandboxShape,
  id: string,
  args: unknown
): Effect.fn.Return<Subjects> {
  const command =
    typeof (args as { command?: unknown })?.command === "string" ? (args as { command: string }).command : ""
  grammar.loaded ??= yield* bashParser
  const analysis = analyzeWith(grammar.loaded, command)
  const sandboxed = yield* sandboxAllows(sandbox, args)
  // One plain simple command is saved as its words, as a rule would match it: `npm  test`
  // and `npm 'test'` are the approved `npm test`. Anything else is saved as its exact text.
  const only = analysis.concerns.length === 0 && analysis.commands.length === 1 ? analysis.commands[0] : undefined
  const plain = only !== undefined && !only.dynamic && only.words.length > 0 ? only.words : undefined
  const text = plain === undefined ? command.trim() : plain.join(" ")
  return {
    kind: "shell",
    shell: { command, analysis, sandboxed },
    paths: [],
    hosts: [],
    grant: {
      tool: id,
      key: plain === undefined ? `cmd:${text}` : `argv:${JSON.stringify(plain)}`,
      display: `${id}(${text})`
    }
  }
})

const fileSubjects = (id: string, paths: ReadonlyArray<CheckedPath>): Subjects => {
  const reals = paths.length === 1 ? [paths[0]!.real] : [...new Set(paths.map((p) => p.real))].sort()
  return {
    kind: "file",
    paths,
    hosts: [],
    grant: { tool: id, key: `paths:${reals.join("\n")}`, display: `${id}(${reals.join(", ")})` }
  }
}

// Hand-chained but for a shell command: every call passes through here (docs/architecture.md).
/** What `req` touches; `realRoot`: the project root as it really is. */
export const subjectsOf = (
  grammar: Grammar,
  fs: LocalFsShape,
  realRoot: string,
  req: SubjectsRequest,
  /** Whether a shell command runs inside the OS sandbox (Sandbox.off: never). */
  sandbox: SandboxShape = Sandbox.off
): Effect.Effect<Subjects> => {
  const { tool, args, ctx } = req
  const kind = kindOf(tool)
  const id = tool.id
  if (kind === "shell") return shellSubjects(grammar, sandbox, id, args)
  let declared: ReadonlyArray<string>
  try {
    declared = req.paths ?? tool.paths(args, ctx)
  } catch (e) {
    const reason =
      `${id} could not say which paths it touches (${e instanceof Error ? e.message : String(e)}): ` +
      "a bug in the tool, not in your call; it does not run."
    return Effect.succeed({
      kind,
      paths: [],
      hosts: [],
      broken: reason,
      grant: { tool: id, key: `args:${canonical(args)}`, display: id }
    })
  }
  if (kind === "file") {
    // A write also notes the file it would change, so the write can refuse another one put there
    // after the check (a hard link, a file made executable): write-transaction.ts.
    const entryOf = tool.operations.includes("file.write") ? fs.entryOf : undefined
    const located = (p: string) => {
      const abs = resolvePath(ctx.root, p)
      return Effect.map(realPathBelow(fs, realRoot, abs), (real): CheckedPath => {
        if (entryOf === undefined) return { abs, real }
        const folder = entryOf(dirnameOf(real))
        const checked = { abs, real, entry: entryOf(real), folder }
        if (folder !== null) return checked
        // The write makes the missing folders from the deepest one there: it must still be this one.
        let at = dirnameOf(real)
        let base: CheckedEntry | null = null
        while (base === null && dirnameOf(at) !== at) {
          at = dirnameOf(at)
          base = entryOf(at)
        }
        return base === null ? checked : { ...checked, base: { path: at, entry: base, at: Date.now() } }
      })
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
  if (kind === "resource") {
    const servers = [...new Set(declared)].sort()
    return Effect.succeed({
      kind,
      paths: [],
      hosts: [],
      servers,
      grant: {
        tool: id,
        key: `servers:${servers.join(" ")}`,
        display: `${id}(${servers.map((s) => `server:${s}`).join(", ")})`
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
