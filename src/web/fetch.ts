/**
 * One HTTP(S) fetch with the limits a model's fetch needs: a deadline, a byte cap checked on
 * Content-Length and again while streaming, a bounded redirect chain followed by hand (so every
 * hop is checked against the SSRF guard), and failures that say what to do instead. A 5xx or a
 * reset connection is a TransientFailure, which the orchestrator retries once. Requests go
 * through the network's dispatcher, whose sockets check the addresses they connect to (guard.ts).
 */
import { Effect } from "effect"
import type { Response } from "undici"
import { headOf } from "../text/cut.ts"
import { fail, type ToolFailure, TransientFailure } from "../tool/errors.ts"
import { hostOf, internalAddresses } from "./address.ts"
import { findRefusal } from "./guard.ts"
import { loadUndici, type WebNetworkShape } from "./network.ts"

export const MAX_BODY_BYTES = 5 * 1024 * 1024
export const MAX_REDIRECTS = 5

export interface FetchOptions {
  readonly timeoutMs: number
  readonly maxBytes?: number
  readonly maxRedirects?: number
  /** Sent as Accept: what the caller would rather get. */
  readonly accept?: string
  /** Resolves names and supplies the guarded dispatchers (WebNetwork). */
  readonly network: WebNetworkShape
  /**
   * The host the person approved reaching an internal address for (the URL's own host, when
   * checkPermissions asked); every other host's internal addresses are refused when connecting.
   */
  readonly approvedHost?: string
}

export interface FetchedPage {
  /** The URL the body came from, after redirects. */
  readonly url: string
  readonly status: number
  /** The media type without parameters, lower case ("" when the server sent none). */
  readonly mediaType: string
  readonly charset: string | undefined
  readonly body: Uint8Array
  /** Every URL redirected through, in order. */
  readonly redirects: ReadonlyArray<string>
}

/** A failure decided inside the promise, carried out of it unchanged. */
class Stop {
  readonly error: ToolFailure | TransientFailure
  constructor(error: ToolFailure | TransientFailure) {
    this.error = error
  }
}

const RESET_CODES = new Set(["ECONNRESET", "EPIPE", "UND_ERR_SOCKET", "UND_ERR_CLOSED"])

const errorCode = (e: unknown): string | undefined => {
  for (let at: unknown = e, depth = 0; at !== undefined && at !== null && depth < 4; depth++) {
    const code = (at as { code?: unknown }).code
    if (typeof code === "string") return code
    at = (at as { cause?: unknown }).cause
  }
  return undefined
}

const isTimeout = (e: unknown): boolean => (e as { name?: unknown })?.name === "TimeoutError"

/** Maps a thrown network error to what the model should hear. */
const networkFailure = (e: unknown, url: string, timeoutMs: number): ToolFailure | TransientFailure => {
  if (e instanceof Stop) return e.error
  const refused = findRefusal(e)
  if (refused !== undefined)
    return fail(
      `${url} was not fetched: when connecting, ${refused.host} resolved to ${refused.addresses.join(", ")}, a local ` +
        "or private address this call was not approved for (the DNS answer may have changed since the check). " +
        `Reaching it needs the person's approval: fetch a URL on ${refused.host} again so they are asked, or use another source.`
    )
  if (isTimeout(e))
    return fail(
      `Fetching ${url} timed out after ${timeoutMs / 1000} s. Retry with a larger timeout (at most 120) or try another URL.`
    )
  const code = errorCode(e)
  if (code !== undefined && RESET_CODES.has(code))
    return new TransientFailure({ message: `The connection to ${url} was reset (${code}).` })
  if (code === "ENOTFOUND" || code === "EAI_AGAIN")
    return fail(`The host of ${url} does not resolve (${code}). Check the URL's spelling.`)
  if (code === "ECONNREFUSED") return fail(`${url} refused the connection: nothing is listening there.`)
  const detail = code ?? (e instanceof Error ? (e.cause instanceof Error ? e.cause.message : e.message) : String(e))
  return fail(`Fetching ${url} failed: ${detail}.`)
}

const parseContentType = (header: string | null): { mediaType: string; charset: string | undefined } => {
  const [type = "", ...params] = (header ?? "").split(";")
  const charset = params
    .map((p) => p.trim())
    .find((p) => p.toLowerCase().startsWith("charset="))
    ?.slice(8)
    .replace(/^"|"$/g, "")
  return { mediaType: type.trim().toLowerCase(), charset }
}

const tooBig = (url: string, maxBytes: number, size?: number) =>
  new Stop(
    fail(
      `${url} is larger than the ${maxBytes / 1024 / 1024} MB limit${size === undefined ? "" : ` (${size} bytes)`}. ` +
        "Fetch a smaller page, or a raw or API URL that returns just the part you need."
    )
  )

/** Reads a body, stopping as soon as it passes `maxBytes`. */
const readCapped = async (response: Response, url: string, maxBytes: number): Promise<Uint8Array> => {
  const declared = Number(response.headers.get("content-length"))
  if (Number.isFinite(declared) && declared > maxBytes) {
    await response.body?.cancel()
    throw tooBig(url, maxBytes, declared)
  }
  if (response.body === null) return new Uint8Array()
  const chunks: Array<Uint8Array> = []
  let size = 0
  const reader = response.body.getReader()
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    size += value.byteLength
    if (size > maxBytes) {
      await reader.cancel()
      throw tooBig(url, maxBytes)
    }
    chunks.push(value)
  }
  const body = new Uint8Array(size)
  let offset = 0
  for (const chunk of chunks) {
    body.set(chunk, offset)
    offset += chunk.byteLength
  }
  return body
}

const statusFailure = async (response: Response, url: string): Promise<ToolFailure | TransientFailure> => {
  const text = headOf((await response.text().catch(() => "")).replace(/\s+/g, " ").trim(), 200)
  const what = `${url} answered HTTP ${response.status} ${response.statusText}${text === "" ? "" : `: ${text}`}`
  if (response.status >= 500) return new TransientFailure({ message: what })
  if (response.status === 404) return fail(`${what}. The page does not exist; check the URL.`)
  if (response.status === 401 || response.status === 403)
    return fail(`${what}. The page needs a login this tool does not have; find a public source instead.`)
  if (response.status === 429) return fail(`${what}. The server is rate limiting; wait before fetching it again.`)
  return fail(`${what}.`)
}

const fetchLoop = async (start: URL, options: FetchOptions, signal: AbortSignal): Promise<FetchedPage> => {
  const maxBytes = options.maxBytes ?? MAX_BODY_BYTES
  const maxRedirects = options.maxRedirects ?? MAX_REDIRECTS
  const startHost = hostOf(start)
  const { fetch } = await loadUndici()
  const dispatcher = await options.network.dispatcher(options.approvedHost)
  const redirects: Array<string> = []
  let url = start
  for (;;) {
    const response = await fetch(url, {
      redirect: "manual",
      signal,
      dispatcher,
      headers: {
        accept: options.accept ?? "text/html, text/markdown;q=0.9, text/plain;q=0.8, */*;q=0.5",
        "user-agent": "freecode-tools webfetch"
      }
    })
    const location = response.headers.get("location")
    if (response.status >= 300 && response.status < 400 && location !== null) {
      await response.body?.cancel()
      const next = new URL(location, url)
      if (next.protocol !== "http:" && next.protocol !== "https:")
        throw new Stop(fail(`${url.href} redirected to ${next.href}, which is not http(s); it was not followed.`))
      if ([start.href, ...redirects].includes(next.href))
        throw new Stop(fail(`${start.href} redirects in a loop (through ${next.href}). Fetch another URL.`))
      redirects.push(next.href)
      if (redirects.length > maxRedirects)
        throw new Stop(
          fail(
            `${start.href} redirected more than ${maxRedirects} times (last: ${next.href}). Fetch the final URL directly.`
          )
        )
      const host = hostOf(next)
      if (host !== startHost && (await internalAddresses(host, options.network.resolve)).length > 0)
        throw new Stop(
          fail(
            `${url.href} redirected to ${next.href}, a local or private address; it was not followed. ` +
              "Fetch that URL directly if you mean it: it then needs the person's approval."
          )
        )
      url = next
      continue
    }
    if (response.status >= 400) throw new Stop(await statusFailure(response, url.href))
    const body = await readCapped(response, url.href, maxBytes)
    return {
      url: url.href,
      status: response.status,
      ...parseContentType(response.headers.get("content-type")),
      body,
      redirects
    }
  }
}

/** Fetches `url` within the options' limits. Interrupting the effect aborts the request. */
export const fetchPage = (
  url: URL,
  options: FetchOptions
): Effect.Effect<FetchedPage, ToolFailure | TransientFailure> =>
  Effect.tryPromise({
    try: (interrupted) =>
      fetchLoop(url, options, AbortSignal.any([interrupted, AbortSignal.timeout(options.timeoutMs)])),
    catch: (e) => networkFailure(e, url.href, options.timeoutMs)
  })
