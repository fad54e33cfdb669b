/**
 * An MCP server's resources, read tolerantly (one malformed entry is left out, not the list):
 * the resources and templates it lists, and one resource's contents as a tool output. Text
 * comes as it is (the call path budgets it and stores it whole, like any output); a blob is
 * decoded when its type is text, and otherwise described in one line and kept whole in metadata
 * (`metadata.resources`, and `metadata.image` for an image a model can be shown).
 */
import { createHash } from "node:crypto"
import { Effect } from "effect"
import { isRecord } from "../schema/json-schema.ts"
import { clip } from "../text/cut.ts"
import type { ToolFailure } from "../tool/errors.ts"
import type { ToolOutput } from "../tool/tool.ts"
import { askingRequest } from "./asking.ts"
import { type McpLink, rawRequest, requestFailure } from "./link.ts"

export interface McpResource {
  readonly uri: string
  readonly name: string
  readonly title?: string
  readonly description?: string
  readonly mimeType?: string
  readonly size?: number
}

export interface McpResourceTemplate {
  readonly uriTemplate: string
  readonly name: string
  readonly title?: string
  readonly description?: string
  readonly mimeType?: string
}

export interface McpPrompt {
  readonly server: string
  readonly name: string
  readonly title?: string
  readonly description?: string
  readonly arguments: ReadonlyArray<{
    readonly name: string
    readonly description?: string
    readonly required: boolean
  }>
}

const MAX_PAGES = 100
/** A description is cut to this in a listing: the list is for choosing, the read is for reading. */
const MAX_LISTED_DESCRIPTION = 300

const str = (value: unknown): string | undefined => (typeof value === "string" && value !== "" ? value : undefined)

const optional = <K extends string>(key: K, value: string | undefined) =>
  (value === undefined ? {} : { [key]: value }) as Partial<Record<K, string>>

/** Every page of a list method, each entry read by `parse` (undefined: left out). */
const listAll = <A>(
  link: McpLink,
  method: string,
  key: string,
  parse: (item: Record<string, unknown>) => A | undefined
): Effect.Effect<ReadonlyArray<A>, ToolFailure> =>
  Effect.gen(function* () {
    const out: Array<A> = []
    let cursor: string | undefined
    for (let page = 0; page < MAX_PAGES; page++) {
      const raw = yield* rawRequest(link, method, cursor === undefined ? {} : { cursor }).pipe(
        Effect.mapError((e) => requestFailure(link, method, e))
      )
      const record = isRecord(raw) ? raw : {}
      for (const item of Array.isArray(record[key]) ? (record[key] as Array<unknown>) : []) {
        const parsed = isRecord(item) ? parse(item) : undefined
        if (parsed !== undefined) out.push(parsed)
      }
      cursor = str(record.nextCursor)
      if (cursor === undefined) break
    }
    return out
  })

export const listResources = (link: McpLink) =>
  listAll(link, "resources/list", "resources", (r): McpResource | undefined => {
    const uri = str(r.uri)
    if (uri === undefined) return undefined
    return {
      uri,
      name: str(r.name) ?? uri,
      ...optional("title", str(r.title)),
      ...optional("description", str(r.description)),
      ...optional("mimeType", str(r.mimeType)),
      ...(typeof r.size === "number" ? { size: r.size } : {})
    }
  })

export const listResourceTemplates = (link: McpLink) =>
  listAll(link, "resources/templates/list", "resourceTemplates", (r): McpResourceTemplate | undefined => {
    const uriTemplate = str(r.uriTemplate)
    if (uriTemplate === undefined) return undefined
    return {
      uriTemplate,
      name: str(r.name) ?? uriTemplate,
      ...optional("title", str(r.title)),
      ...optional("description", str(r.description)),
      ...optional("mimeType", str(r.mimeType))
    }
  })

export const listPrompts = (link: McpLink) =>
  listAll(link, "prompts/list", "prompts", (p): McpPrompt | undefined => {
    const name = str(p.name)
    if (name === undefined) return undefined
    const args = Array.isArray(p.arguments) ? p.arguments.filter(isRecord) : []
    return {
      server: link.server,
      name,
      ...optional("title", str(p.title)),
      ...optional("description", str(p.description)),
      arguments: args.flatMap((a) => {
        const argName = str(a.name)
        return argName === undefined
          ? []
          : [{ name: argName, ...optional("description", str(a.description)), required: a.required === true }]
      })
    }
  })

/** One line per resource or template, for the model to choose from. */
export const describeListing = (
  resources: ReadonlyArray<McpResource>,
  templates: ReadonlyArray<McpResourceTemplate>
): string => {
  const line = (id: string, name: string, mimeType: string | undefined, description: string | undefined) =>
    `  ${id}${name === id ? "" : `  "${name}"`}${mimeType === undefined ? "" : ` (${mimeType})`}${description === undefined ? "" : ` — ${clip(description.replace(/\s+/g, " "), MAX_LISTED_DESCRIPTION, "…")}`}`
  const lines = resources.map((r) => line(r.uri, r.title ?? r.name, r.mimeType, r.description))
  if (templates.length > 0) {
    lines.push("  templates (fill in the {placeholders} and read the URI):")
    for (const t of templates) lines.push(line(t.uriTemplate, t.title ?? t.name, t.mimeType, t.description))
  }
  return lines.length === 0 ? "  (no resources)" : lines.join("\n")
}

/** Types whose bytes are text, whatever the server sent them as. */
const isTextType = (mimeType: string): boolean =>
  mimeType.startsWith("text/") || /[/+](json|xml|yaml|x-yaml|javascript|typescript|x-sh|csv|markdown)$/.test(mimeType)

const IMAGE_TYPES = new Set(["image/png", "image/jpeg", "image/gif", "image/webp"])

/** `resources/read` of one URI as a tool output; the server may ask the person on the way, as during a call. */
export const readResource = (link: McpLink, uri: string, canSeeImages: boolean, sessionId?: string) =>
  askingRequest(link, link.person, "resources/read", { uri }, `resources/read of ${uri}`, sessionId).pipe(
    Effect.map((raw): ToolOutput => {
      const record = isRecord(raw) ? raw : {}
      const contents = Array.isArray(record.contents) ? record.contents.filter(isRecord) : []
      const parts: Array<string> = []
      const blobs: Array<Record<string, unknown>> = []
      let image: Record<string, unknown> | undefined
      for (const item of contents) {
        const itemUri = str(item.uri) ?? uri
        const mimeType = str(item.mimeType) ?? "application/octet-stream"
        const header = contents.length > 1 || itemUri !== uri ? `[${itemUri} (${mimeType})]\n` : ""
        if (typeof item.text === "string") {
          parts.push(`${header}${item.text}`)
          continue
        }
        if (typeof item.blob !== "string") continue
        const bytes = Buffer.from(item.blob, "base64")
        if (isTextType(mimeType)) {
          parts.push(`${header}${bytes.toString("utf8")}`)
          continue
        }
        const sha256 = createHash("sha256").update(bytes).digest("hex")
        blobs.push({ uri: itemUri, mimeType, bytes: bytes.length, sha256, blob: item.blob })
        const shown = IMAGE_TYPES.has(mimeType) && canSeeImages && image === undefined
        if (shown) image = { mimeType, data: item.blob, bytes: bytes.length }
        parts.push(
          `[${itemUri}: ${mimeType}, ${bytes.length} bytes, sha256 ${sha256}; kept whole in metadata.resources[${blobs.length - 1}]${shown ? ", shown as an image" : ""}]`
        )
      }
      const metadata: Record<string, unknown> = { mcpServer: link.server, uri }
      if (blobs.length > 0) metadata.resources = blobs
      if (image !== undefined) metadata.image = image
      return {
        title: `${link.server}: ${uri}`,
        output: parts.length === 0 ? `${uri} has no contents.` : parts.join("\n"),
        metadata
      }
    })
  )
