/**
 * The `code` tool's description: how a program calls tools, its limits, and the typed API of the
 * tools it can reach (api.ts). The API is cut at a character budget; the tools past it are named,
 * and tools.search finds them with their signatures.
 */
import type { Tool } from "../tool/tool.ts"
import { identifiers, signatureOf } from "./api.ts"
import type { CodeLimits } from "./limits.ts"

/** Characters of signatures the description carries at most; the rest are found with tools.search. */
export const API_BUDGET_CHARS = 6_000

/**
 * The intro. Each sentence is paid on every request, so it says what a program needs and no
 * more; what depends on read and write (read's `text`, `update`) is said only when they are
 * reachable, since `update` exists only then (prelude.ts).
 */
const intro = (limits: CodeLimits, ids: ReadonlySet<string>) =>
  [
    "Run a JavaScript program (TypeScript types are stripped) that calls tools, instead of many separate calls.",
    `\`await tools.NAME(args)\` runs that tool exactly as a direct call (same permissions, approvals, hooks) and resolves to {id, status, title, output, metadata} with the FULL output${
      ids.has("read")
        ? " (a read's also has `text`: the whole file without line numbers, absent when the read holds only part of it)"
        : ""
    }; a refused or failed call rejects with a ToolError {status, message, tool, id}: catch it to go on (this tool's result lists it).`,
    ...(ids.has("read") && ids.has("write")
      ? [
          "`await update(filePath, (text) => newText)` reads a whole file and writes what your function returns if it differs."
        ]
      : []),
    "What you console.log (or text()) and return is this tool's output: nested results stay out of your context unless you print them, so print only what you need.",
    "Promise.all runs read-only calls in parallel and changing ones one at a time, in order. No require, import, fs, network, process or timers: only `tools`.",
    `Limits: ${Math.round(limits.wallMs / 1000)} s, ${Math.round(limits.memoryBytes / 1048576)} MiB, ${limits.maxCalls} tool calls.`,
    'await tools.search("words") gives [{name, call, description, signature}] for tools not listed below; tools.call(name, args) calls a tool by name.'
  ].join("\n")

/** The description for the tools a program can reach (never the program tools themselves). */
export const describeCode = (tools: ReadonlyArray<Tool>, limits: CodeLimits): string => {
  const byId = new Map(tools.map((t) => [t.id, t]))
  const lines: Array<string> = []
  const rest: Array<string> = []
  let used = 0
  for (const [ident, id] of identifiers(tools)) {
    const line = signatureOf(ident, byId.get(id)!)
    if (used + line.length > API_BUDGET_CHARS) rest.push(id)
    else {
      lines.push(line)
      used += line.length
    }
  }
  const named = new Set(identifiers(tools).map(([, id]) => id))
  for (const t of tools) if (!named.has(t.id)) rest.push(t.id)
  const more = rest.length === 0 ? "" : `\n// also reachable (tools.search for their signatures): ${rest.join(", ")}`
  return `${intro(limits, new Set(tools.map((t) => t.id)))}\n\ndeclare const tools: {\n${lines.join("\n")}\n}${more}`
}
