/**
 * Turning a fetched body into what a model reads: HTML to markdown (mdream, which keeps tables
 * and code blocks and is fast on large pages) or to plain text, scripts and styles dropped;
 * images listed as metadata rather than inlined.
 */
import { lazyRequire } from "../load/lazy.ts"

// mdream loads with the first HTML page converted, not with the package.
const mdream = lazyRequire<typeof import("@mdream/js")>("@mdream/js")

/** Elements whose content is never text a reader sees. */
const DROPPED = ["script", "style", "noscript", "template", "iframe", "svg", "canvas"]

export interface PageImage {
  readonly src: string
  readonly alt: string
}

const resolveSrc = (src: string, base: string): string => {
  try {
    return new URL(src, base).href
  } catch {
    return src
  }
}

/** HTML to GitHub-flavoured markdown; links and images resolved against `baseUrl`. */
export const htmlToMarkdownWithImages = (
  html: string,
  baseUrl: string
): { readonly markdown: string; readonly images: ReadonlyArray<PageImage> } => {
  const images: Array<PageImage> = []
  const markdown = mdream().htmlToMarkdown(html, {
    origin: baseUrl,
    plugins: {
      filter: { exclude: DROPPED },
      extraction: {
        img: (e) => {
          const src = e.attributes.src
          if (src !== undefined && src !== "")
            images.push({ src: resolveSrc(src, baseUrl), alt: e.attributes.alt ?? "" })
        }
      }
    }
  })
  return { markdown: markdown.trim(), images }
}

const ENTITIES: Readonly<Record<string, string>> = { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'", nbsp: " " }

const decodeEntities = (text: string): string =>
  text.replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (whole, name: string) => {
    if (name[0] === "#") {
      const code = name[1] === "x" || name[1] === "X" ? Number.parseInt(name.slice(2), 16) : Number(name.slice(1))
      return Number.isFinite(code) && code <= 0x10ffff ? String.fromCodePoint(code) : whole
    }
    return ENTITIES[name.toLowerCase()] ?? whole
  })

const BLOCK = /<\/?(p|div|br|li|ul|ol|tr|table|h[1-6]|pre|blockquote|section|article|header|footer|nav|main)\b[^>]*>/gi

/** HTML to the plain text a reader sees: no markup, one blank line at most between blocks. */
export const htmlToText = (html: string): string => {
  const dropped = new RegExp(`<(${DROPPED.join("|")})\\b[\\s\\S]*?</\\1\\s*>`, "gi")
  const text = html
    .replace(/<!--[\s\S]*?-->/g, "")
    .replace(dropped, "")
    .replace(BLOCK, "\n")
    .replace(/<\/t[dh]\s*>/gi, " ")
    .replace(/<[^>]+>/g, "")
  return decodeEntities(text)
    .split("\n")
    .map((line) => line.replace(/[ \t\r\f\v]+/g, " ").trim())
    .join("\n")
    .replace(/\n{3,}/g, "\n\n")
    .trim()
}

/** Decodes bytes in the declared charset, UTF-8 when none or an unknown one is declared. */
export const decodeBody = (body: Uint8Array, charset: string | undefined): string => {
  try {
    return new TextDecoder(charset ?? "utf-8").decode(body)
  } catch {
    return new TextDecoder("utf-8").decode(body)
  }
}

export const isHtml = (mediaType: string): boolean => mediaType === "text/html" || mediaType === "application/xhtml+xml"

export const isJson = (mediaType: string): boolean => mediaType === "application/json" || mediaType.endsWith("+json")

/** Media types read as text: text/*, JSON, XML, JavaScript, YAML, TOML. */
export const isTextual = (mediaType: string): boolean =>
  mediaType === "" ||
  mediaType.startsWith("text/") ||
  isJson(mediaType) ||
  mediaType.endsWith("+xml") ||
  /^application\/(xml|javascript|ecmascript|x-yaml|yaml|toml|x-sh|graphql)$/.test(mediaType)
