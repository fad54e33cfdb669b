/**
 * Our tools as a server of either MCP era puts them on the wire: the server's name, a tool's
 * declaration, a call's params read, a result as MCP content. Apart from both servers (server.ts,
 * SDK 1.32; modern-server.ts, SDK 2.x) and free of either SDK at run time, so a client of one era
 * never loads the other era's server side (docs/benchmarks.md, "Start-up").
 */
import type { CallToolResult, Tool as McpTool } from "@modelcontextprotocol/sdk/types.js"
import type { Context } from "effect"
import type { Dispatcher } from "../dispatch/dispatcher.ts"
import type { ToolRegistry } from "../registry/registry.ts"
import { isRecord } from "../schema/json-schema.ts"
import { changesNothing } from "../tool/read-only.ts"
import type { ToolResult } from "../tool/result.ts"
import type { Tool } from "../tool/tool.ts"

export const SERVER_INFO = { name: "freecode-tools", version: "0.1.0" }

/** What the server needs: the registry it lists and the dispatcher every call goes through. */
export type ServedSystem = Context.Context<Dispatcher | ToolRegistry>

const INVALID_PARAMS = -32602

/**
 * Unusable tools/call params: -32602 with a sentence. Both SDKs answer a thrown error with its
 * `code` and `message`; the message reads as SDK 1.32's McpError words it, in both eras alike.
 */
export class InvalidCallParams extends Error {
  readonly code = INVALID_PARAMS
  constructor(detail: string) {
    super(`MCP error ${INVALID_PARAMS}: ${detail}`)
    this.name = "McpError"
  }
}

const kindOf = (value: unknown) => (value === null ? "null" : Array.isArray(value) ? "an array" : typeof value)

/** The call's name and arguments, or an invalid-params error that says what to send. */
export const callParams = (params: unknown): { readonly name: string; readonly args: Record<string, unknown> } => {
  const p = isRecord(params) ? params : {}
  if (typeof p.name !== "string" || p.name === "") {
    throw new InvalidCallParams(`tools/call needs params.name, a tool's name; got ${kindOf(p.name)}`)
  }
  if (p.arguments !== undefined && !isRecord(p.arguments)) {
    throw new InvalidCallParams(
      `tools/call params.arguments must be a JSON object of the tool's parameters; got ${kindOf(p.arguments)}`
    )
  }
  return { name: p.name, args: (p.arguments as Record<string, unknown> | undefined) ?? {} }
}

const OPEN_WORLD = new Set(["network.fetch", "mcp.call", "agent.spawn", "person.ask", "program.run"])

/** A tool declaration as an MCP client sees it; the annotations come from the declaration. */
export const toMcpTool = (tool: Tool): McpTool => ({
  name: tool.id,
  description: tool.description,
  inputSchema: tool.inputSchema as McpTool["inputSchema"],
  annotations: {
    readOnlyHint: changesNothing(tool),
    destructiveHint: !changesNothing(tool),
    idempotentHint: tool.retrySafe || changesNothing(tool),
    openWorldHint: tool.source === "mcp" || tool.operations.some((o) => OPEN_WORLD.has(o))
  }
})

const media = (value: unknown): ReadonlyArray<{ mimeType: string; data: string }> => {
  const list = Array.isArray(value) ? value : value === undefined ? [] : [value]
  return list.filter(
    (m): m is { mimeType: string; data: string } =>
      isRecord(m) && typeof m.mimeType === "string" && typeof m.data === "string"
  )
}

/**
 * A ToolResult as MCP content: the model's copy as text, plus the images, audio and embedded
 * resources a tool put in its metadata (never as base64 inside the text).
 */
export const toCallToolResult = (result: ToolResult): CallToolResult => {
  const content: Array<CallToolResult["content"][number]> = []
  if (result.modelOutput !== "" || result.status !== "ok") content.push({ type: "text", text: result.modelOutput })
  const meta = result.metadata
  const images = media(meta.images ?? meta.image)
  for (const image of images) content.push({ type: "image", data: image.data, mimeType: image.mimeType })
  for (const clip of media(meta.audio)) content.push({ type: "audio", data: clip.data, mimeType: clip.mimeType })
  for (const resource of Array.isArray(meta.resources) ? meta.resources : []) {
    if (!isRecord(resource) || typeof resource.uri !== "string") continue
    const mimeType = typeof resource.mimeType === "string" ? { mimeType: resource.mimeType } : {}
    if (typeof resource.text === "string") {
      content.push({ type: "resource", resource: { uri: resource.uri, text: resource.text, ...mimeType } })
    } else if (typeof resource.blob === "string") {
      content.push({ type: "resource", resource: { uri: resource.uri, blob: resource.blob, ...mimeType } })
    }
  }
  if (content.length === 0) content.push({ type: "text", text: "" })
  return {
    content,
    ...(result.status === "ok" ? {} : { isError: true }),
    ...(isRecord(meta.structuredContent) ? { structuredContent: meta.structuredContent } : {})
  }
}

/**
 * A JSON Schema validator (either SDK's `jsonSchemaValidator` option) made on its first use.
 * Each SDK's `Server` otherwise builds an Ajv instance when it is constructed, before the first
 * answer; it is used only to check an elicitation's answer against the form.
 */
export const validatorOnFirstUse = <V extends { getValidator: (schema: never) => unknown }>(make: () => V): V => {
  let made: V | undefined
  return {
    getValidator: (schema: never) => {
      made ??= make()
      return made.getValidator(schema)
    }
  } as V
}
