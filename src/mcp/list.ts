/**
 * A tolerant reading of a `tools/list` answer. The SDK's listTools validates the whole list and
 * rejects it if one tool is malformed; here each tool is read on its own, so a server with one
 * broken tool loses that tool only, with the reason, and keeps the rest. A tool that can only run
 * as an MCP task (`execution.taskSupport: "required"`) is skipped too: this client makes plain calls;
 * so is one whose `x-mcp-header` declarations break the rules (param-headers.ts).
 */
import { isRecord } from "../schema/json-schema.ts"
import { headerDeclarations, type ParamHeader } from "./param-headers.ts"

export interface McpToolAnnotations {
  readonly title?: string
  readonly readOnlyHint?: boolean
  readonly destructiveHint?: boolean
  readonly idempotentHint?: boolean
  readonly openWorldHint?: boolean
}

/** One tool as the server declared it. */
export interface McpToolInfo {
  readonly name: string
  readonly title?: string
  readonly description?: string
  readonly inputSchema: Record<string, unknown>
  readonly annotations: McpToolAnnotations
  /** Arguments its calls repeat in `Mcp-Param-*` headers (param-headers.ts); absent when none. */
  readonly paramHeaders?: ReadonlyArray<ParamHeader>
}

export interface SkippedTool {
  readonly name: string
  readonly reason: string
}

export interface ToolsPage {
  readonly tools: ReadonlyArray<McpToolInfo>
  readonly skipped: ReadonlyArray<SkippedTool>
  readonly nextCursor: string | undefined
}

const bool = (value: unknown): boolean | undefined => (typeof value === "boolean" ? value : undefined)

const annotationsOf = (value: unknown): McpToolAnnotations => {
  if (!isRecord(value)) return {}
  const out: Record<string, unknown> = {}
  if (typeof value.title === "string") out.title = value.title
  for (const key of ["readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"] as const) {
    const b = bool(value[key])
    if (b !== undefined) out[key] = b
  }
  return out as McpToolAnnotations
}

export const parseToolsPage = (result: unknown): ToolsPage => {
  const record = isRecord(result) ? result : {}
  const list = Array.isArray(record.tools) ? record.tools : []
  const tools: Array<McpToolInfo> = []
  const skipped: Array<SkippedTool> = []
  list.forEach((item, i) => {
    if (!isRecord(item) || typeof item.name !== "string" || item.name === "") {
      skipped.push({ name: `#${i}`, reason: "it has no name" })
      return
    }
    if (!isRecord(item.inputSchema)) {
      skipped.push({ name: item.name, reason: "its inputSchema is not a JSON object" })
      return
    }
    // A plain tools/call to such a tool is refused by its server: offering it would only waste a turn.
    if (isRecord(item.execution) && item.execution.taskSupport === "required") {
      skipped.push({ name: item.name, reason: "it can only run as an MCP task, which this client does not start" })
      return
    }
    // Its calls could not carry the headers its schema asks for: the server would refuse every one.
    const declared = headerDeclarations(item.inputSchema)
    if (!declared.ok) {
      skipped.push({ name: item.name, reason: `its x-mcp-header declarations are invalid: ${declared.reason}` })
      return
    }
    tools.push({
      name: item.name,
      ...(typeof item.title === "string" ? { title: item.title } : {}),
      ...(typeof item.description === "string" ? { description: item.description } : {}),
      inputSchema: item.inputSchema,
      annotations: annotationsOf(item.annotations),
      ...(declared.headers.length === 0 ? {} : { paramHeaders: declared.headers })
    })
  })
  if (!Array.isArray(record.tools)) skipped.push({ name: "(list)", reason: "the answer has no tools array" })
  return {
    tools,
    skipped,
    nextCursor: typeof record.nextCursor === "string" && record.nextCursor !== "" ? record.nextCursor : undefined
  }
}
