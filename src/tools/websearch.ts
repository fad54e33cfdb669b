/**
 * `websearch`: a query to the configured search API (SearXNG, Brave or Tavily; see
 * src/web/search/config.ts), results as numbered title / url / snippet. Registered only when a
 * provider is configured (`webSearchLayer`).
 */
import { Effect, Layer, Schema } from "effect"
import { ToolRegistry } from "../registry/registry.ts"
import { fail } from "../tool/errors.ts"
import { defineTool } from "../tool/tool.ts"
import { searchSetup } from "../web/search/config.ts"
import { SearchProvider, type SearchResult } from "../web/search/provider.ts"

export const DEFAULT_RESULTS = 8
export const MAX_RESULTS = 20

const Parameters = Schema.Struct({
  query: Schema.String.annotate({ description: "What to search the web for." }),
  numResults: Schema.optionalKey(
    Schema.Int.annotate({ description: `How many results, default ${DEFAULT_RESULTS}, at most ${MAX_RESULTS}.` })
  )
})

export const formatResults = (results: ReadonlyArray<SearchResult>): string =>
  results
    .map((r, i) => [`${i + 1}. ${r.title}`, `   ${r.url}`, ...(r.snippet === "" ? [] : [`   ${r.snippet}`])].join("\n"))
    .join("\n")

export const WebSearchTool = defineTool({
  id: "websearch",
  description:
    "Search the web. Returns numbered results: title, URL and a snippet. Fetch a result with webfetch to read it.",
  parameters: Parameters,
  concurrencySafe: true,
  retrySafe: true,
  interruptBehavior: "cancel",
  timeout: "30 seconds",
  permissions: { operations: ["network.fetch"] },
  validateInput: ({ query, numResults }) =>
    Effect.gen(function* () {
      if (query.trim() === "") return yield* fail("query is empty; say what to search for.")
      if (numResults !== undefined && (numResults < 1 || numResults > MAX_RESULTS))
        return yield* fail(`numResults must be between 1 and ${MAX_RESULTS}, got ${numResults}.`)
    }),
  execute: ({ query, numResults }) =>
    Effect.gen(function* () {
      const provider = yield* SearchProvider
      const results = yield* provider.search(query.trim(), numResults ?? DEFAULT_RESULTS)
      const title = `websearch ${query}`
      const metadata = { provider: provider.name, count: results.length }
      if (results.length === 0)
        return { title, output: `No results for "${query}". Try other words or a broader query.`, metadata }
      return { title, output: formatResults(results), metadata }
    })
})

/** Registers websearch when the environment configures a search API; otherwise registers nothing. */
export const webSearchLayer = Layer.effectDiscard(
  Effect.gen(function* () {
    const setup = yield* searchSetup
    if (setup._tag === "NotConfigured") return
    const registry = yield* ToolRegistry
    yield* registry.register(WebSearchTool).pipe(Effect.provideService(SearchProvider, setup.provider))
  }).pipe(Effect.orDie)
)
