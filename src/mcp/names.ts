/**
 * `mcp__<server>__<tool>`, the form permission rules match on. Characters providers refuse in a
 * tool name (anything outside [A-Za-z0-9_-]) become `_`; a name longer than providers accept, or
 * one that would collide with another, is shortened and given a hash of the original names, so
 * two tools never share a name. The original name travels with each converted tool, so a call
 * routes back to what the server calls it.
 */
import { createHash } from "node:crypto"

/** The longest tool name Anthropic, OpenAI and Gemini all accept. */
export const MAX_TOOL_NAME = 64

export const sanitizeName = (name: string): string => name.replace(/[^A-Za-z0-9_-]/g, "_")

const hashOf = (server: string, tool: string): string =>
  createHash("sha256").update(`${server}\0${tool}`).digest("hex").slice(0, 8)

/** The name with a hash of the original names at its end, within the length limit. */
export const hashedToolName = (server: string, tool: string): string => {
  const plain = `mcp__${sanitizeName(server)}__${sanitizeName(tool)}`
  const hash = hashOf(server, tool)
  return `${plain.slice(0, MAX_TOOL_NAME - hash.length - 1)}_${hash}`
}

/** Our name for a server's tool: readable when it fits and is exact, hashed otherwise. */
export const mcpToolName = (server: string, tool: string): string => {
  const plain = `mcp__${sanitizeName(server)}__${sanitizeName(tool)}`
  return plain.length <= MAX_TOOL_NAME ? plain : hashedToolName(server, tool)
}

/**
 * Names for one server's whole tool list: our name → the server's name. Tools are taken in the
 * server's name order, so when two map to the same name the choice of which gets the hash is
 * stable across restarts.
 */
export const assignToolNames = (server: string, tools: ReadonlyArray<string>): Map<string, string> => {
  const names = new Map<string, string>()
  for (const tool of [...tools].sort()) {
    const plain = mcpToolName(server, tool)
    names.set(names.has(plain) ? hashedToolName(server, tool) : plain, tool)
  }
  return names
}
