/**
 * SearXNG, the self-hosted metasearch engine: `GET {base}/search?q=…&format=json` (the JSON
 * format must be enabled in the instance's settings.yml), results in `results[]` with
 * `title`, `url`, `content`.
 */
import { Effect } from "effect"
import { arrayAt, cleanResults, field, requestJson, type SearchProviderShape } from "./provider.ts"

export const searxngProvider = (baseUrl: string): SearchProviderShape => ({
  name: "searxng",
  search: (query, count) =>
    Effect.gen(function* () {
      const url = new URL("search", baseUrl.endsWith("/") ? baseUrl : `${baseUrl}/`)
      url.searchParams.set("q", query)
      url.searchParams.set("format", "json")
      const json = yield* requestJson("searxng", url)
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
