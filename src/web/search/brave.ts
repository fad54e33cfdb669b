/**
 * Brave Search API: `GET /res/v1/web/search?q=…&count=N` with the key in
 * `X-Subscription-Token`; results in `web.results[]` with `title`, `url`, `description`.
 */
import { Effect, Redacted } from "effect"
import { arrayAt, cleanResults, field, requestJson, type SearchProviderShape } from "./provider.ts"

export const BRAVE_DEFAULT_URL = "https://api.search.brave.com/res/v1/web/search"

export const braveProvider = (
  apiKey: Redacted.Redacted<string>,
  endpoint = BRAVE_DEFAULT_URL
): SearchProviderShape => ({
  name: "brave",
  search: (query, count) =>
    Effect.gen(function* () {
      const url = new URL(endpoint)
      url.searchParams.set("q", query)
      url.searchParams.set("count", String(Math.min(count, 20)))
      const json = yield* requestJson("brave", url, { headers: { "x-subscription-token": Redacted.value(apiKey) } })
      return cleanResults(
        arrayAt(json, "web", "results").map((r) => ({
          title: field(r, "title"),
          url: field(r, "url"),
          snippet: field(r, "description")
        })),
        count
      )
    })
})
