import { describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Effect, Layer } from "effect"
import { testToolSystem } from "../../layers/test.ts"
import { Orchestrator } from "../../src/orchestrator/orchestrator.ts"
import { ToolRegistry } from "../../src/registry/registry.ts"
import { searchSetup, webSearchUnavailableReason } from "../../src/web/search/config.ts"
import { startServer } from "./server.ts"

const withEnv = (env: Record<string, string>) => ConfigProvider.layer(ConfigProvider.fromEnv({ env }))

/** The default tool set (built-ins, plus websearch when `env` configures it). */
const system = (env: Record<string, string>) =>
  testToolSystem({ root: process.cwd() }).pipe(Layer.provide(withEnv(env)))

const search = (args: Record<string, unknown>) =>
  Orchestrator.use((o) => o.execute({ id: "w", name: "websearch", args }, { sessionId: "s" }))

const readBody = (req: import("node:http").IncomingMessage) =>
  new Promise<string>((resolve) => {
    let body = ""
    req.on("data", (c) => (body += c))
    req.on("end", () => resolve(body))
  })

const EXPECTED = [
  "1. Effect: the missing standard library",
  "   https://effect.website/",
  "   Build robust apps in TypeScript.",
  "2. Effect on GitHub",
  "   https://github.com/Effect-TS/effect",
  "   The Effect monorepo."
].join("\n")

describe("websearch", () => {
  it.live("SearXNG: GET /search?q=…&format=json, results[] with title/url/content", () =>
    Effect.gen(function* () {
      const seen: Array<string> = []
      const base = yield* startServer((req, res, url) => {
        seen.push(
          `${req.method} ${url.pathname} q=${url.searchParams.get("q")} format=${url.searchParams.get("format")}`
        )
        res.writeHead(200, { "content-type": "application/json" }).end(
          JSON.stringify({
            query: url.searchParams.get("q"),
            number_of_results: 0,
            results: [
              {
                url: "https://effect.website/",
                title: "Effect: the missing standard library",
                content: "Build robust apps in TypeScript.",
                engine: "duckduckgo",
                score: 1
              },
              {
                url: "https://github.com/Effect-TS/effect",
                title: "Effect on GitHub",
                content: "The Effect monorepo."
              },
              { url: "https://third.example/", title: "Third", content: "cut by numResults" }
            ],
            answers: [],
            suggestions: []
          })
        )
      })
      const result = yield* Effect.provide(
        search({ query: "effect typescript", numResults: 2 }),
        system({ SEARXNG_URL: `${base}/` })
      )
      expect(result).toMatchObject({ status: "ok", modelOutput: EXPECTED, metadata: { provider: "searxng", count: 2 } })
      expect(seen).toEqual(["GET /search q=effect typescript format=json"])
    })
  )

  it.live("Brave: GET with X-Subscription-Token, web.results[] with description (highlighting stripped)", () =>
    Effect.gen(function* () {
      const seen: Array<string> = []
      const base = yield* startServer((req, res, url) => {
        seen.push(`${url.pathname} q=${url.searchParams.get("q")} count=${url.searchParams.get("count")}`)
        if (req.headers["x-subscription-token"] !== "brave-key") {
          res.writeHead(401, { "content-type": "application/json" }).end('{"type":"ErrorResponse"}')
          return
        }
        res.writeHead(200, { "content-type": "application/json" }).end(
          JSON.stringify({
            type: "search",
            query: { original: url.searchParams.get("q") },
            web: {
              type: "search",
              results: [
                {
                  title: "Effect: the missing standard library",
                  url: "https://effect.website/",
                  description: "Build robust apps in <strong>TypeScript</strong>.",
                  page_age: "2025-01-01"
                },
                {
                  title: "Effect on GitHub",
                  url: "https://github.com/Effect-TS/effect",
                  description: "The Effect monorepo."
                }
              ]
            }
          })
        )
      })
      const endpoint = `${base}/res/v1/web/search`
      const ok = yield* Effect.provide(
        search({ query: "effect" }),
        system({ FREECODE_SEARCH_PROVIDER: "brave", BRAVE_API_KEY: "brave-key", BRAVE_API_URL: endpoint })
      )
      expect(ok).toMatchObject({ status: "ok", modelOutput: EXPECTED, metadata: { provider: "brave" } })
      expect(seen).toEqual(["/res/v1/web/search q=effect count=8"])
      const badKey = yield* Effect.provide(
        search({ query: "effect" }),
        system({ BRAVE_API_KEY: "wrong", BRAVE_API_URL: endpoint })
      )
      expect(badKey.status).toBe("error")
      expect(badKey.modelOutput).toContain("The brave search API rejected its key (HTTP 401)")
    })
  )

  it.live("Tavily: POST JSON {query, max_results} with a Bearer key; a 5xx is retried once", () =>
    Effect.gen(function* () {
      const bodies: Array<unknown> = []
      let calls = 0
      const base = yield* startServer((req, res) => {
        calls++
        readBody(req).then((body) => {
          if (calls === 1) {
            res.writeHead(502).end("bad gateway")
            return
          }
          bodies.push({ method: req.method, auth: req.headers.authorization, body: JSON.parse(body) })
          res.writeHead(200, { "content-type": "application/json" }).end(
            JSON.stringify({
              query: "effect",
              answer: null,
              images: [],
              results: [
                {
                  title: "Effect: the missing standard library",
                  url: "https://effect.website/",
                  content: "Build robust apps in TypeScript.",
                  score: 0.9,
                  raw_content: null
                },
                {
                  title: "Effect on GitHub",
                  url: "https://github.com/Effect-TS/effect",
                  content: "The Effect monorepo.",
                  score: 0.8
                }
              ],
              response_time: 0.5
            })
          )
        })
      })
      const result = yield* Effect.provide(
        search({ query: "effect", numResults: 5 }),
        system({ TAVILY_API_KEY: "tvly-key", TAVILY_API_URL: `${base}/search` })
      )
      expect(result).toMatchObject({
        status: "ok",
        modelOutput: EXPECTED,
        attempts: 2,
        metadata: { provider: "tavily" }
      })
      expect(bodies).toEqual([{ method: "POST", auth: "Bearer tvly-key", body: { query: "effect", max_results: 5 } }])
    })
  )

  it.live("not registered without configuration, and the reason names the variables", () =>
    Effect.gen(function* () {
      const ids = yield* Effect.provide(
        ToolRegistry.use((r) => r.tools).pipe(Effect.map((ts) => ts.map((t) => t.id))),
        system({})
      )
      expect(ids).not.toContain("websearch")
      expect(ids).toContain("webfetch")
      const configured = yield* Effect.provide(
        ToolRegistry.use((r) => r.tools).pipe(Effect.map((ts) => ts.map((t) => t.id))),
        system({ SEARXNG_URL: "http://127.0.0.1:1" })
      )
      expect(configured).toContain("websearch")

      const reason = (env: Record<string, string>) => webSearchUnavailableReason.pipe(Effect.provide(withEnv(env)))
      expect(yield* reason({})).toBe(
        "websearch is not available: no search API is configured: set SEARXNG_URL (a SearXNG instance), " +
          "BRAVE_API_KEY or TAVILY_API_KEY (and FREECODE_SEARCH_PROVIDER to choose between several)."
      )
      expect(yield* reason({ FREECODE_SEARCH_PROVIDER: "tavily", SEARXNG_URL: "http://x" })).toBe(
        "websearch is not available: FREECODE_SEARCH_PROVIDER is tavily but TAVILY_API_KEY is not set."
      )
      expect(yield* reason({ FREECODE_SEARCH_PROVIDER: "google" })).toContain(
        "it must be one of searxng, brave, tavily"
      )
      expect(yield* reason({ TAVILY_API_KEY: "k" })).toBeUndefined()
      const chosen = yield* searchSetup.pipe(
        Effect.provide(withEnv({ SEARXNG_URL: "http://x", BRAVE_API_KEY: "k", FREECODE_SEARCH_PROVIDER: "Brave" }))
      )
      expect(chosen._tag === "Configured" && chosen.provider.name).toBe("brave")
    })
  )

  it.live("an empty query or too many results is refused with what to send", () =>
    Effect.gen(function* () {
      const empty = yield* search({ query: "  " })
      expect(empty.modelOutput).toContain("query is empty")
      const many = yield* search({ query: "x", numResults: 50 })
      expect(many.modelOutput).toContain("numResults must be between 1 and 20, got 50")
    }).pipe(Effect.provide(system({ SEARXNG_URL: "http://127.0.0.1:1" })))
  )
})
