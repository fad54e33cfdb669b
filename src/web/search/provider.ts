/**
 * `SearchProvider`: one web search API behind one interface, so `websearch` does not care
 * which service answers. Implementations live beside this file, one per API.
 */
import { Context, Effect } from "effect"
import { headOf } from "../../text/cut.ts"
import { fail, type ToolFailure, TransientFailure } from "../../tool/errors.ts"

export interface SearchResult {
  readonly title: string
  readonly url: string
  readonly snippet: string
}

export interface SearchProviderShape {
  /** Names the API in titles and messages ("searxng", "brave", "tavily"). */
  readonly name: string
  readonly search: (
    query: string,
    count: number
  ) => Effect.Effect<ReadonlyArray<SearchResult>, ToolFailure | TransientFailure>
}

export class SearchProvider extends Context.Service<SearchProvider, SearchProviderShape>()("freecode/SearchProvider") {}

export const SEARCH_TIMEOUT_MS = 20_000

/** Sends one request to a search API and decodes its JSON, mapping failures to what the model should hear. */
export const requestJson = (provider: string, url: URL, init: RequestInit = {}) =>
  Effect.tryPromise({
    try: async (signal) => {
      const response = await fetch(url, {
        ...init,
        signal: AbortSignal.any([signal, AbortSignal.timeout(SEARCH_TIMEOUT_MS)]),
        headers: { accept: "application/json", ...init.headers }
      })
      if (!response.ok) {
        const body = headOf((await response.text().catch(() => "")).replace(/\s+/g, " "), 200)
        throw { status: response.status, body }
      }
      return (await response.json()) as unknown
    },
    catch: (e): ToolFailure | TransientFailure => {
      const status = (e as { status?: number }).status
      const body = (e as { body?: string }).body ?? ""
      if (status === 401 || status === 403)
        return fail(`The ${provider} search API rejected its key (HTTP ${status}). The person must fix the key.`)
      if (status === 429) return fail(`The ${provider} search API is rate limiting (HTTP 429); search again later.`)
      if (status !== undefined && status >= 500)
        return new TransientFailure({ message: `The ${provider} search API failed (HTTP ${status}): ${body}` })
      if (status !== undefined) return fail(`The ${provider} search API answered HTTP ${status}: ${body}`)
      if ((e as { name?: string }).name === "TimeoutError")
        return fail(`The ${provider} search API did not answer in ${SEARCH_TIMEOUT_MS / 1000} s; try again.`)
      if (e instanceof SyntaxError) return fail(`The ${provider} search API sent a response that is not JSON.`)
      return new TransientFailure({
        message: `Could not reach the ${provider} search API: ${e instanceof Error ? (e.cause instanceof Error ? e.cause.message : e.message) : String(e)}`
      })
    }
  })

/** A string field of an unknown record, or "". */
export const field = (record: unknown, key: string): string => {
  const value = (record as Record<string, unknown> | null)?.[key]
  return typeof value === "string" ? value : ""
}

/** The array at `path` of an unknown JSON value, or []. */
export const arrayAt = (json: unknown, ...path: ReadonlyArray<string>): ReadonlyArray<unknown> => {
  let at = json
  for (const key of path) at = (at as Record<string, unknown> | null)?.[key]
  return Array.isArray(at) ? at : []
}

/** Drops entries without a URL and strips the HTML highlighting some APIs put in snippets. */
export const cleanResults = (results: ReadonlyArray<SearchResult>, count: number): ReadonlyArray<SearchResult> =>
  results
    .filter((r) => r.url !== "")
    .slice(0, count)
    .map((r) => ({
      title: r.title.replace(/<[^>]+>/g, "").trim() || r.url,
      url: r.url,
      snippet: r.snippet
        .replace(/<[^>]+>/g, "")
        .replace(/\s+/g, " ")
        .trim()
    }))
