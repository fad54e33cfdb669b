/**
 * Tavily Search API: `POST /search` with a JSON body `{query, max_results}` and the key as
 * `Authorization: Bearer …`; results in `results[]` with `title`, `url`, `content`.
 */
import { Effect, Redacted } from "effect"
import { arrayAt, cleanResults, field, requestJson, type SearchProviderShape } from "./provider.ts"

export const TAVILY_DEFAULT_URL = "https://api.tavily.com/search"

export const tavilyProvider = (
  apiKey: Redacted.Redacted<string>,
  endpoint = TAVILY_DEFAULT_URL
): SearchProviderShape => ({
  name: "tavily",
  search: (query, count) =>
    Effect.gen(function* () {
      const json = yield* requestJson("tavily", new URL(endpoint), {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${Redacted.value(apiKey)}` },
        body: JSON.stringify({ query, max_results: Math.min(count, 20) })
      })
      return cleanResults(
        arrayAt(json, "results").map((r) => ({
          title: field(r, "title"),
          url: field(r, "url"),
          snippet: field(r, "content")
        })),
        count
      )
    })
})
