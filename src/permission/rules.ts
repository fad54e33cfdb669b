/**
 * Permission rules in Claude Code's syntax: `Tool` or `Tool(specifier)`.
 *
 * - The tool name matches case-insensitively; `mcp__server__*` (a glob) and `mcp__server`
 *   (every tool of that server) name MCP tools.
 * - Claude Code's names for kinds of tool name every tool whose declaration says it does that:
 *   `Read` every tool declaring `file.read` or `file.search`, `Edit`/`Write` every `file.write`
 *   tool, `Bash` every `shell.exec` tool, `WebFetch` every `network.fetch` tool. So a block
 *   pasted from Claude Code's settings works, and nothing here keys off our own tools' names.
 * - What a specifier means depends on the declaration too: a command prefix for a shell tool
 *   (`npm test`, `npm run test:*`, `ls *`), a gitignore-style path glob for a file tool
 *   (`./secrets/**`, `src/**`, `//etc/**`, `~/x`, `.env`), `domain:host` for a fetch tool,
 *   `server:name` for a tool that reads MCP resources.
 */
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import picomatch from "picomatch"
import type { Operation, Tool } from "../tool/tool.ts"

export type RuleBehavior = "allow" | "ask" | "deny"

export interface Rule {
  /** As written in the config. */
  readonly text: string
  /** The tool part, lower-cased. */
  readonly tool: string
  /** The part in parentheses, when there is one. */
  readonly specifier: string | undefined
}

const RULE = /^([A-Za-z0-9_.*-]+)(?:\((.*)\))?$/s

/** Parses a rule; a string that is not one comes back as a message saying what a rule looks like. */
export const parseRule = (text: string): Rule | string => {
  const m = RULE.exec(text.trim())
  if (m === null) {
    return `"${text}" is not a rule. Write Tool or Tool(specifier), e.g. "Bash(npm test:*)", "Read(./secrets/**)", "mcp__github__*".`
  }
  const specifier = m[2]
  if (specifier !== undefined && specifier.trim() === "") {
    return `"${text}" has empty parentheses. Leave them out to name the whole tool, or put a command, path or domain inside.`
  }
  const tool = m[1]!.toLowerCase()
  if (tool.includes("*") && !/^mcp__[^*]+__\*$/.test(tool) && tool !== "*") {
    return `"${text}": a * in the tool name is only allowed as mcp__server__*.`
  }
  return { text: text.trim(), tool, specifier: specifier?.trim() }
}

/** Claude Code's rule names for kinds of tool, as the operations a declaration lists. */
const FAMILIES: Readonly<Record<string, ReadonlyArray<Operation>>> = {
  read: ["file.read", "file.search"],
  edit: ["file.write"],
  write: ["file.write"],
  multiedit: ["file.write"],
  bash: ["shell.exec"],
  webfetch: ["network.fetch"]
}

const globToRegExp = (glob: string) =>
  new RegExp(`^${glob.replace(/[.+?^${}()|[\]\\]/g, "\\$&").replace(/\*/g, ".*")}$`, "i")

/** Whether the rule's tool part names this tool. */
export const namesTool = (rule: Rule, tool: Pick<Tool, "id" | "operations">): boolean => {
  const id = tool.id.toLowerCase()
  if (rule.tool === "*" || rule.tool === id) return true
  if (rule.tool.includes("*")) return globToRegExp(rule.tool).test(id)
  if (rule.tool.startsWith("mcp__") && id.startsWith(`${rule.tool}__`)) return true
  const family = FAMILIES[rule.tool]
  return family !== undefined && tool.operations.some((op) => family.includes(op))
}

/** How a tool's calls are described to rules, from its declaration. */
export type Kind = "shell" | "file" | "network" | "resource" | "other"

export const kindOf = (tool: Pick<Tool, "operations">): Kind =>
  tool.operations.includes("shell.exec")
    ? "shell"
    : tool.operations.some((op) => op === "file.read" || op === "file.write" || op === "file.search")
      ? "file"
      : tool.operations.includes("network.fetch")
        ? "network"
        : tool.operations.includes("mcp.resource")
          ? "resource"
          : "other"

// ---------------------------------------------------------------------------------------------
// Command specifiers

export interface CommandPattern {
  readonly words: ReadonlyArray<string>
  /** `:*` or a trailing ` *`: the words are a prefix, matched at a word boundary. */
  readonly prefix: boolean
}

/** The command text and whether it is a prefix; the words are split by the caller (real grammar). */
export const commandSpecifier = (specifier: string): { readonly text: string; readonly prefix: boolean } => {
  if (specifier.endsWith(":*")) return { text: specifier.slice(0, -2), prefix: true }
  if (specifier === "*") return { text: "", prefix: true }
  if (specifier.endsWith(" *")) return { text: specifier.slice(0, -2), prefix: true }
  return { text: specifier, prefix: false }
}

/** `ls:*` matches `ls` and `ls -la`, never `lsof`: words are compared, not characters. */
export const matchesCommand = (pattern: CommandPattern, words: ReadonlyArray<string>): boolean => {
  if (pattern.prefix ? words.length < pattern.words.length : words.length !== pattern.words.length) return false
  return pattern.words.every((w, i) => w === words[i])
}

const programName = (word: string) => word.slice(word.lastIndexOf("/") + 1)

/**
 * For deny and ask rules: the program is compared by its name whatever the path on either side,
 * so `Bash(/bin/rm:*)` stops `rm x` and `/usr/bin/rm x`, and `Bash(rm:*)` stops `/bin/rm x`.
 * (An allow rule compares words exactly: `Bash(ls:*)` must not allow `./evil/ls`.)
 */
export const matchesCommandAnyPath = (pattern: CommandPattern, words: ReadonlyArray<string>): boolean => {
  const [first, ...rest] = pattern.words
  const [program, ...args] = words
  if (first === undefined) return matchesCommand(pattern, words)
  if (program === undefined || programName(first) !== programName(program)) return false
  return matchesCommand({ words: rest, prefix: pattern.prefix }, args)
}

// ---------------------------------------------------------------------------------------------
// Path specifiers

/**
 * A gitignore-style path pattern as an absolute glob: `//x` is absolute, `~/x` is in the home
 * directory, `/x` and `./x` and any `a/b` are relative to the project root, and a bare name
 * (`.env`, `*.pem`) matches at any depth.
 */
export const pathGlob = (specifier: string, root: string): string => {
  if (specifier.startsWith("//")) return specifier.slice(1)
  if (specifier === "~" || specifier.startsWith("~/")) return NodePath.join(NodeOs.homedir(), specifier.slice(1))
  const rel = specifier.startsWith("./")
    ? specifier.slice(2)
    : specifier.startsWith("/")
      ? specifier.slice(1)
      : specifier
  const anchored = specifier.startsWith("/") || specifier.startsWith("./") || rel.replace(/\/$/, "").includes("/")
  return anchored ? `${root.replace(/\/$/, "")}/${rel}` : `${root.replace(/\/$/, "")}/**/${rel}`
}

/**
 * Whether an absolute path matches the pattern: the path itself, or anything below a matched
 * directory. Each matcher holds the globs it compiled (the rules' specifiers, a bounded set):
 * one per permission engine, so nothing outlives the system that made it.
 */
export const makePathMatcher = (): ((specifier: string, root: string, abs: string) => boolean) => {
  const matchers = new Map<string, (path: string) => boolean>()
  return (specifier, root, abs) => {
    const glob = pathGlob(specifier, root).replace(/\/$/, "")
    let m = matchers.get(glob)
    if (m === undefined) {
      const self = picomatch(glob, { dot: true })
      const below = picomatch(`${glob}/**`, { dot: true })
      m = (p) => self(p) || below(p)
      matchers.set(glob, m)
    }
    return m(abs)
  }
}

// ---------------------------------------------------------------------------------------------
// Domain specifiers

/** `domain:example.com` matches example.com and its subdomains; `domain:*.example.com` only subdomains. */
export const matchesDomain = (specifier: string, host: string): boolean => {
  if (!specifier.startsWith("domain:")) return false
  const want = specifier.slice("domain:".length).toLowerCase()
  const h = host.toLowerCase().replace(/\.$/, "")
  if (want.startsWith("*.")) return h.endsWith(want.slice(1))
  return h === want || h.endsWith(`.${want}`)
}

// ---------------------------------------------------------------------------------------------
// MCP server specifiers

/** `server:docs` matches the MCP server named docs (exactly, with `*` as any run of characters). */
export const matchesServer = (specifier: string, server: string): boolean =>
  specifier.startsWith("server:") && globToRegExp(specifier.slice("server:".length)).test(server)
