/**
 * `webfetch`: one http(s) URL as markdown, text or raw HTML. Limits: 5 MB, 5 redirects, a
 * timeout (30 s default, 120 s max). A host that resolves to a loopback, private or link-local
 * address asks for approval (SSRF), and only that host may then reach one when connecting
 * (src/web/guard.ts); `paths` carries the URL's host so `WebFetch(domain:…)` permission rules can
 * match it.
 */
import { Duration, Effect, Schema } from "effect"
import { fail } from "../tool/errors.ts"
import { defineTool, type ToolContext } from "../tool/tool.ts"
import { hostOf, internalAddresses } from "../web/address.ts"
import { decodeBody, htmlToMarkdownWithImages, htmlToText, isHtml, isJson, isTextual } from "../web/convert.ts"
import { fetchPage } from "../web/fetch.ts"
import { WebNetwork } from "../web/network.ts"

export const DEFAULT_TIMEOUT_SECONDS = 30
export const MAX_TIMEOUT_SECONDS = 120
const IMAGE_TYPES = new Set(["image/png", "image/jpeg", "image/gif", "image/webp"])

/**
 * The internal host each call asked approval for. The orchestrator runs execute only once the
 * call is approved, with the same context object, so a host found here was approved.
 */
const askedFor = new WeakMap<ToolContext, string>()

const Parameters = Schema.Struct({
  url: Schema.String.annotate({ description: "The http(s) URL to fetch." }),
  format: Schema.optionalKey(
    Schema.Literals(["markdown", "text", "html"]).annotate({
      description: "How to return an HTML page: markdown (default), text, or the raw html."
    })
  ),
  timeout: Schema.optionalKey(
    Schema.Int.annotate({
      description: `Seconds to wait, default ${DEFAULT_TIMEOUT_SECONDS}, at most ${MAX_TIMEOUT_SECONDS}.`
    })
  )
})
type Parameters = typeof Parameters.Type

/** The URL if it parses and is http(s); undefined otherwise (validateInput says why). */
const parseUrl = (raw: string): URL | undefined => {
  try {
    const url = new URL(raw.trim())
    return url.protocol === "http:" || url.protocol === "https:" ? url : undefined
  } catch {
    return undefined
  }
}

const timeoutSeconds = (args: Parameters) =>
  Math.min(Math.max(args.timeout ?? DEFAULT_TIMEOUT_SECONDS, 1), MAX_TIMEOUT_SECONDS)

/** The host a WebFetch(domain:…) rule matches: lower case, IPv6 without brackets. */
export const webfetchHost = (args: { readonly url: string }): string | undefined => {
  const url = parseUrl(args.url)
  return url === undefined ? undefined : hostOf(url)
}

export const WebFetchTool = defineTool({
  id: "webfetch",
  description:
    "Fetch an http(s) URL and return it as markdown (HTML converted), plain text or raw html. JSON and text are " +
    "returned as they are; images as an image. Up to 5 MB, 5 redirects; timeout in seconds (default 30, max 120). " +
    "Use websearch to find URLs; do not guess them.",
  parameters: Parameters,
  concurrencySafe: true,
  retrySafe: true,
  interruptBehavior: "cancel",
  // The fetch has its own deadline with a clearer message; this outer one is a backstop.
  timeout: (args) => Duration.seconds(timeoutSeconds(args) + 5),
  permissions: { operations: ["network.fetch"] },
  paths: (args) => {
    const host = webfetchHost(args)
    return host === undefined ? [] : [host]
  },
  validateInput: (args) =>
    Effect.gen(function* () {
      if (parseUrl(args.url) === undefined) {
        const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(args.url.trim())?.[1]
        return yield* fail(
          scheme !== undefined && !/^https?$/i.test(scheme)
            ? `webfetch only fetches http:// and https:// URLs, not ${scheme}:. Use read for local files.`
            : `"${args.url}" is not a valid URL. Send a full URL such as https://example.com/page.`
        )
      }
      if (args.timeout !== undefined && (args.timeout < 1 || args.timeout > MAX_TIMEOUT_SECONDS))
        return yield* fail(`timeout must be between 1 and ${MAX_TIMEOUT_SECONDS} seconds, got ${args.timeout}.`)
    }),
  checkPermissions: (args, ctx) =>
    Effect.gen(function* () {
      const url = parseUrl(args.url)
      if (url === undefined) return { behavior: "allow" as const }
      const network = yield* WebNetwork
      const internal = yield* Effect.promise(() => internalAddresses(hostOf(url), network.resolve))
      if (internal.length > 0) askedFor.set(ctx, hostOf(url))
      return internal.length === 0
        ? { behavior: "allow" as const }
        : {
            behavior: "ask" as const,
            reason: `${url.host} resolves to a local or private address (${internal.join(", ")}); fetching it needs approval.`
          }
    }),
  execute: (args, ctx) =>
    Effect.gen(function* () {
      const url = parseUrl(args.url)!
      const format = args.format ?? "markdown"
      // Only if the URL is still the one asked about (a hook may have changed the arguments since).
      const approvedHost = askedFor.get(ctx) === hostOf(url) ? hostOf(url) : undefined
      const page = yield* fetchPage(url, {
        network: yield* WebNetwork,
        ...(approvedHost === undefined ? {} : { approvedHost }),
        timeoutMs: timeoutSeconds(args) * 1000,
        ...(format === "html" ? { accept: "text/html, */*;q=0.5" } : {})
      })
      const base = {
        url: page.url,
        status: page.status,
        contentType: page.mediaType,
        bytes: page.body.byteLength,
        ...(page.redirects.length > 0 ? { redirects: page.redirects } : {})
      }
      const title = `webfetch ${page.url}`

      if (IMAGE_TYPES.has(page.mediaType)) {
        const note = `${page.url} is an image (${page.mediaType}, ${page.body.byteLength} bytes).`
        return ctx.canSeeImages
          ? {
              title,
              output: `${note} It is attached.`,
              metadata: {
                ...base,
                image: { mimeType: page.mediaType, data: Buffer.from(page.body).toString("base64") }
              }
            }
          : { title, output: `${note} This model cannot view images.`, metadata: base }
      }
      if (!isTextual(page.mediaType) && !isHtml(page.mediaType))
        return yield* fail(
          `${page.url} is ${page.mediaType} (${page.body.byteLength} bytes), not text, HTML or an image; webfetch cannot show it.`,
          base
        )

      const text = decodeBody(page.body, page.charset)
      if (isHtml(page.mediaType) && format !== "html") {
        if (format === "text") return { title, output: htmlToText(text), metadata: { ...base, format } }
        const { markdown, images } = htmlToMarkdownWithImages(text, page.url)
        return { title, output: markdown, metadata: { ...base, format, ...(images.length > 0 ? { images } : {}) } }
      }
      if (isJson(page.mediaType)) {
        try {
          return { title, output: JSON.stringify(JSON.parse(text), null, 2), metadata: base }
        } catch {
          // not valid JSON after all: show it as the server sent it
        }
      }
      return { title, output: text, metadata: base }
    })
})
