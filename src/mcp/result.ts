/**
 * An MCP `tools/call` result as a tool output: `content[]` flattened to the text the model reads;
 * images and audio into metadata (base64 never goes into text the model reads); an embedded
 * resource's text inlined, its blob into metadata; a resource link as one line;
 * `structuredContent` kept in metadata. Unknown content types are shown as one JSON line rather
 * than dropped, so nothing a server sends silently disappears.
 */
import { isRecord } from "../schema/json-schema.ts"
import { clip } from "../text/cut.ts"

export interface FlatResult {
  readonly output: string
  readonly metadata: Record<string, unknown>
  readonly isError: boolean
}

const base64Bytes = (data: unknown): number =>
  typeof data === "string" ? Math.floor((data.replace(/=+$/, "").length * 3) / 4) : 0

const str = (value: unknown): string | undefined => (typeof value === "string" ? value : undefined)

const oneLine = (value: unknown): string => {
  const text = JSON.stringify(value) ?? String(value)
  return clip(text, 500, "...")
}

/**
 * Why a `tools/call` answer is not a result, or undefined when it is one. `content` must be an
 * array; a server that sends only `structuredContent` is still read (the JSON is shown).
 */
export const resultProblem = (result: unknown): string | undefined => {
  if (!isRecord(result)) return `the answer is ${result === null ? "null" : typeof result}, not a result object`
  if (Array.isArray(result.content)) return undefined
  if (result.content === undefined && result.structuredContent !== undefined) return undefined
  const got = result.content === undefined ? "no content" : `content of type ${typeof result.content}`
  return `the result has ${got} where a list of content blocks belongs`
}

export const flattenResult = (result: unknown): FlatResult => {
  const record = isRecord(result) ? result : {}
  const content = Array.isArray(record.content) ? record.content : []
  const lines: Array<string> = []
  const images: Array<Record<string, unknown>> = []
  const audio: Array<Record<string, unknown>> = []
  const resources: Array<Record<string, unknown>> = []
  const links: Array<Record<string, unknown>> = []

  for (const item of content) {
    if (!isRecord(item)) continue
    switch (item.type) {
      case "text":
        lines.push(str(item.text) ?? "")
        break
      case "image":
      case "audio": {
        const list = item.type === "image" ? images : audio
        const mimeType = str(item.mimeType) ?? "application/octet-stream"
        list.push({ mimeType, data: item.data })
        lines.push(
          `[${item.type} ${mimeType}, ${base64Bytes(item.data)} bytes: metadata.${item.type === "image" ? "images" : "audio"}[${list.length - 1}]]`
        )
        break
      }
      case "resource": {
        const resource = isRecord(item.resource) ? item.resource : {}
        const uri = str(resource.uri) ?? "(no uri)"
        const mimeType = str(resource.mimeType)
        if (typeof resource.text === "string") {
          lines.push(`[resource ${uri}${mimeType === undefined ? "" : ` (${mimeType})`}]`, resource.text)
        } else {
          resources.push({ uri, mimeType: mimeType ?? "application/octet-stream", blob: resource.blob })
          lines.push(
            `[resource ${uri}${mimeType === undefined ? "" : ` (${mimeType})`}, ${base64Bytes(resource.blob)} bytes: metadata.resources[${resources.length - 1}]]`
          )
        }
        break
      }
      case "resource_link": {
        const uri = str(item.uri) ?? "(no uri)"
        links.push({ uri, name: item.name, mimeType: item.mimeType, description: item.description })
        const name = str(item.name)
        const description = str(item.description)
        const mimeType = str(item.mimeType)
        lines.push(
          `[resource link: ${uri}${name === undefined ? "" : ` "${name}"`}${mimeType === undefined ? "" : ` (${mimeType})`}${description === undefined ? "" : ` — ${description}`}]`
        )
        break
      }
      default:
        lines.push(`[${String(item.type)} content: ${oneLine(item)}]`)
    }
  }

  const metadata: Record<string, unknown> = {}
  if (images.length > 0) {
    metadata.images = images
    // The built-in convention (read): a lone image travels as metadata.image.
    metadata.image = images[0]
  }
  if (audio.length > 0) metadata.audio = audio
  if (resources.length > 0) metadata.resources = resources
  if (links.length > 0) metadata.resourceLinks = links
  if (record.structuredContent !== undefined) metadata.structuredContent = record.structuredContent
  // A server that sends only structured content still has to say something to the model.
  if (lines.length === 0 && record.structuredContent !== undefined) {
    lines.push(JSON.stringify(record.structuredContent, null, 2))
  }
  return { output: lines.join("\n"), metadata, isError: record.isError === true }
}
