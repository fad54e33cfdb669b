/**
 * Whether a rule in the config means what its author meant. A rule that parses can still match
 * nothing: a tool name nobody has (`Bsh(rm:*)` denies nothing), or `Bash(rm: *)`, whose space
 * makes `rm:` the command. Those are refused when the config is read, with what was meant.
 */
import type { KnownTool } from "../config/section.ts"
import { closestNames } from "../registry/suggest.ts"
import type { Tool } from "../tool/tool.ts"
import { namesTool, parseRule } from "./rules.ts"

/** Claude Code's names for kinds of tool, offered first when a name is misspelt. */
const KIND_NAMES = ["Bash", "Read", "Edit", "Write", "WebFetch", "MultiEdit"]

const isShellRule = (tool: string) => tool === "bash"

/** What is wrong with the rule's text alone, or undefined when it is a rule. */
export const validateRule = (text: string): string | undefined => {
  const rule = parseRule(text)
  if (typeof rule === "string") return rule
  const spec = rule.specifier
  if (spec === undefined || !isShellRule(rule.tool)) return undefined
  const colonSpace = /^(.*?):\s+\*$/s.exec(spec)
  if (colonSpace !== null) {
    const words = colonSpace[1]!
    return `"${rule.text}": the space after the colon makes "${words}:" the command, which nothing runs. Write "${text.trim().slice(0, text.trim().indexOf("("))}(${words}:*)" for ${words} with any arguments.`
  }
  if (spec.includes(":*") && !spec.endsWith(":*")) {
    return `"${rule.text}": :* means "with any arguments" and goes only at the end, as in "Bash(npm run test:*)".`
  }
  return undefined
}

/**
 * What is wrong with the rule's tool name given the tools there are, or undefined when it names
 * one of them (or an MCP server's tools, whose servers may connect later).
 */
export const ruleToolProblem = (text: string, known: ReadonlyArray<KnownTool>): string | undefined => {
  // The operations are the declarations' own strings; rules compare them, nothing more.
  const tools = known as ReadonlyArray<Pick<Tool, "id" | "operations">>
  const rule = parseRule(text)
  if (typeof rule === "string") return rule
  if (rule.tool === "*" || rule.tool.startsWith("mcp__")) return undefined
  if (tools.some((t) => namesTool(rule, t))) return undefined
  const name = text.trim().replace(/\(.*$/s, "")
  const kinds = KIND_NAMES.filter((k) =>
    tools.some((t) => namesTool({ text: k, tool: k.toLowerCase(), specifier: undefined }, t))
  )
  const near = closestNames(
    name,
    [...kinds, ...tools.map((t) => t.id).filter((id) => !kinds.some((k) => k.toLowerCase() === id))],
    1
  )
  const hint = near.length > 0 ? ` Did you mean ${near[0]}?` : ` Tools: ${tools.map((t) => t.id).join(", ")}.`
  return `"${rule.text}": no tool is named ${name}, so the rule would match nothing.${hint}`
}

/** What is wrong with a profile's tool id, or undefined when a tool has it. */
export const toolIdProblem = (id: string, tools: ReadonlyArray<Pick<Tool, "id">>): string | undefined => {
  if (tools.some((t) => t.id.toLowerCase() === id.toLowerCase()) || id.startsWith("mcp__")) return undefined
  const near = closestNames(
    id,
    tools.map((t) => t.id),
    1
  )
  return `no tool has the id "${id}".${near.length > 0 ? ` Did you mean ${near[0]}?` : ` Tools: ${tools.map((t) => t.id).join(", ")}.`}`
}
