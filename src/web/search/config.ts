/**
 * Which search API `websearch` uses, from the environment (Effect Config):
 *
 *   FREECODE_SEARCH_PROVIDER  searxng | brave | tavily; unset = the first one configured below
 *   SEARXNG_URL               base URL of a SearXNG instance (JSON format enabled)
 *   BRAVE_API_KEY             Brave Search API key          (BRAVE_API_URL overrides the endpoint)
 *   TAVILY_API_KEY            Tavily API key                (TAVILY_API_URL overrides the endpoint)
 *
 * With none configured the tool is not registered; `searchSetup` says why.
 */
import { Config, Effect, Option } from "effect"
import { BRAVE_DEFAULT_URL, braveProvider } from "./brave.ts"
import type { SearchProviderShape } from "./provider.ts"
import { searxngProvider } from "./searxng.ts"
import { TAVILY_DEFAULT_URL, tavilyProvider } from "./tavily.ts"

export const SEARCH_PROVIDERS = ["searxng", "brave", "tavily"] as const

export type SearchSetup =
  | { readonly _tag: "Configured"; readonly provider: SearchProviderShape }
  | { readonly _tag: "NotConfigured"; readonly reason: string }

const SearchEnv = Config.all({
  choice: Config.option(Config.String("FREECODE_SEARCH_PROVIDER")),
  searxngUrl: Config.option(Config.String("SEARXNG_URL")),
  braveKey: Config.option(Config.Redacted("BRAVE_API_KEY")),
  braveUrl: Config.String("BRAVE_API_URL").pipe(Config.withDefault(BRAVE_DEFAULT_URL)),
  tavilyKey: Config.option(Config.Redacted("TAVILY_API_KEY")),
  tavilyUrl: Config.String("TAVILY_API_URL").pipe(Config.withDefault(TAVILY_DEFAULT_URL))
})

const notConfigured = (reason: string): SearchSetup => ({ _tag: "NotConfigured", reason })
const configured = (provider: SearchProviderShape): SearchSetup => ({ _tag: "Configured", provider })

/** Reads the environment and picks the provider, or says why there is none. Never fails. */
export const searchSetup: Effect.Effect<SearchSetup> = Effect.gen(function* () {
  const env = yield* SearchEnv
  const make: Record<(typeof SEARCH_PROVIDERS)[number], () => SearchProviderShape | string> = {
    searxng: () => Option.match(env.searxngUrl, { onNone: () => "SEARXNG_URL is not set", onSome: searxngProvider }),
    brave: () =>
      Option.match(env.braveKey, {
        onNone: () => "BRAVE_API_KEY is not set",
        onSome: (k) => braveProvider(k, env.braveUrl)
      }),
    tavily: () =>
      Option.match(env.tavilyKey, {
        onNone: () => "TAVILY_API_KEY is not set",
        onSome: (k) => tavilyProvider(k, env.tavilyUrl)
      })
  }
  if (Option.isSome(env.choice)) {
    const name = env.choice.value.trim().toLowerCase()
    if (!(SEARCH_PROVIDERS as ReadonlyArray<string>).includes(name))
      return notConfigured(
        `FREECODE_SEARCH_PROVIDER is "${env.choice.value}"; it must be one of ${SEARCH_PROVIDERS.join(", ")}.`
      )
    const made = make[name as (typeof SEARCH_PROVIDERS)[number]]()
    return typeof made === "string"
      ? notConfigured(`FREECODE_SEARCH_PROVIDER is ${name} but ${made}.`)
      : configured(made)
  }
  for (const name of SEARCH_PROVIDERS) {
    const made = make[name]()
    if (typeof made !== "string") return configured(made)
  }
  return notConfigured(
    "no search API is configured: set SEARXNG_URL (a SearXNG instance), BRAVE_API_KEY or TAVILY_API_KEY " +
      "(and FREECODE_SEARCH_PROVIDER to choose between several)."
  )
}).pipe(Effect.catch((e) => Effect.succeed(notConfigured(`the search settings are invalid: ${e.message}`))))

/** Why websearch is not available, or undefined when it is: for `freecode-tools tools`. */
export const webSearchUnavailableReason: Effect.Effect<string | undefined> = Effect.map(searchSetup, (s) =>
  s._tag === "NotConfigured" ? `websearch is not available: ${s.reason}` : undefined
)
