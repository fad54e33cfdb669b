import { readFileSync } from "node:fs"
import { NodeServices } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Layer } from "effect"
import { toolSystem } from "../../layers/system.ts"
import { testToolSystem } from "../../layers/test.ts"
import { Dispatcher } from "../../src/dispatch/dispatcher.ts"
import { Orchestrator } from "../../src/orchestrator/orchestrator.ts"
import { OutputConfig } from "../../src/output/config.ts"
import { Approval, type ApprovalQuestion } from "../../src/permission/approval.ts"
import { WebFetchTool, webfetchHost } from "../../src/tools/webfetch.ts"
import { isInternalAddress } from "../../src/web/address.ts"
import { bigPage } from "../fixtures/web/big-page.ts"
import { startServer } from "./server.ts"

const ARTICLE = readFileSync(new URL("../fixtures/web/article.html", import.meta.url), "utf8")
const system = testToolSystem({ root: process.cwd(), tools: [WebFetchTool] })

/** One webfetch call through the orchestrator; the person approves unless told otherwise. */
const fetchCall = (args: Record<string, unknown>, approve: boolean | "nobody" = true) =>
  Orchestrator.use((o) =>
    o.execute(
      { id: "f1", name: "webfetch", args },
      approve === "nobody" ? { sessionId: "s" } : { sessionId: "s", approve: () => Effect.succeed(approve) }
    )
  )

describe("webfetch", () => {
  it.live("turns HTML into markdown: tables and code kept, scripts and styles dropped, images as metadata", () =>
    Effect.gen(function* () {
      const base = yield* startServer((_req, res) => {
        res.writeHead(200, { "content-type": "text/html; charset=utf-8" })
        res.end(ARTICLE)
      })
      const result = yield* fetchCall({ url: `${base}/notes` })
      expect(result.status).toBe("ok")
      const md = result.modelOutput
      expect(md).toContain("# Release notes & changes")
      expect(md).toContain(`[cache](${base}/docs/cache)`)
      expect(md).toContain("| Option | Default |\n| --- | --- |\n| maxAge | 60 |\n| size | 100 |")
      expect(md).toContain("```ts\nconst cache = makeCache({ maxAge: 60 })\nif (cache.size < 10) cache.clear()\n```")
      expect(md).not.toContain("do-not-show")
      expect(md).not.toContain("secret-style")
      expect(md).not.toContain("Enable JavaScript")
      expect(result.metadata).toMatchObject({
        url: `${base}/notes`,
        status: 200,
        contentType: "text/html",
        format: "markdown",
        images: [{ src: `${base}/img/diagram.png`, alt: "Cache diagram" }]
      })

      const text = yield* fetchCall({ url: `${base}/notes`, format: "text" })
      expect(text.modelOutput).toContain("Release notes & changes")
      expect(text.modelOutput).toContain("maxAge 60")
      expect(text.modelOutput).toContain("if (cache.size < 10) cache.clear()")
      expect(text.modelOutput).not.toMatch(/<\w|do-not-show|\|/)

      const html = yield* fetchCall({ url: `${base}/notes`, format: "html" })
      expect(html.modelOutput).toBe(ARTICLE)
    }).pipe(Effect.provide(system))
  )

  it.live("converts a 1 MB page whole: every section, table and code block, no script", () =>
    Effect.gen(function* () {
      const page = bigPage(1024 * 1024)
      const sections = page.match(/<h2>/g)!.length
      const base = yield* startServer((_req, res) => {
        res.writeHead(200, { "content-type": "text/html" })
        res.end(page)
      })
      const result = yield* Effect.provide(
        Orchestrator.use((o) =>
          o.execute(
            { id: "big", name: "webfetch", args: { url: `${base}/big` } },
            { sessionId: "s", approve: () => Effect.succeed(true) }
          )
        ),
        testToolSystem({
          root: process.cwd(),
          tools: [WebFetchTool],
          output: { maxChars: 10_000_000, maxLines: 1_000_000 }
        })
      )
      expect(result.status).toBe("ok")
      const md = result.modelOutput
      expect(md.match(/^## Section \d+$/gm)).toHaveLength(sections)
      expect(md).toContain(`## Section ${sections - 1}`)
      expect(md).toContain(`| k${sections - 1} | v${sections - 1} |`)
      expect(md).toContain(`\`\`\`js\nfunction f${sections - 1}(a) {`)
      expect(md).not.toContain("tracking")
      expect(result.metadata).toMatchObject({ bytes: page.length })
    })
  )

  it.live("returns plain text as is, pretty-prints JSON, attaches an image only for a model that sees", () =>
    Effect.gen(function* () {
      const png = Buffer.from(
        "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==",
        "base64"
      )
      const base = yield* startServer((_req, res, url) => {
        if (url.pathname === "/t.txt")
          res.writeHead(200, { "content-type": "text/plain" }).end("line 1\n<b>not html</b>\n")
        else if (url.pathname === "/j") res.writeHead(200, { "content-type": "application/json" }).end('{"a":[1,2]}')
        else if (url.pathname === "/p.png") res.writeHead(200, { "content-type": "image/png" }).end(png)
        else res.writeHead(200, { "content-type": "application/zip" }).end(Buffer.from([80, 75, 3, 4, 0, 0]))
      })
      expect((yield* fetchCall({ url: `${base}/t.txt` })).modelOutput).toBe("line 1\n<b>not html</b>\n")
      expect((yield* fetchCall({ url: `${base}/j` })).modelOutput).toBe('{\n  "a": [\n    1,\n    2\n  ]\n}')

      const blind = yield* fetchCall({ url: `${base}/p.png` })
      expect(blind.modelOutput).toContain("is an image (image/png, 70 bytes). This model cannot view images.")
      expect(blind.metadata).not.toHaveProperty("image")
      const seeing = yield* Orchestrator.use((o) =>
        o.execute(
          { id: "img", name: "webfetch", args: { url: `${base}/p.png` } },
          { sessionId: "s", canSeeImages: true, approve: () => Effect.succeed(true) }
        )
      )
      expect(seeing.metadata).toMatchObject({ image: { mimeType: "image/png", data: png.toString("base64") } })

      const zip = yield* fetchCall({ url: `${base}/x.zip` })
      expect(zip.status).toBe("error")
      expect(zip.modelOutput).toContain("is application/zip (6 bytes), not text, HTML or an image")
    }).pipe(Effect.provide(system))
  )

  it.live("follows up to 5 redirects, refuses a sixth and a loop", () =>
    Effect.gen(function* () {
      const base = yield* startServer((_req, res, url) => {
        const hop = /^\/hop\/(\d+)$/.exec(url.pathname)
        if (hop) {
          const n = Number(hop[1])
          res.writeHead(302, { location: n === 0 ? "/final" : `/hop/${n - 1}` }).end()
        } else if (url.pathname === "/loop-a") res.writeHead(301, { location: "/loop-b" }).end()
        else if (url.pathname === "/loop-b") res.writeHead(301, { location: "/loop-a" }).end()
        else res.writeHead(200, { "content-type": "text/plain" }).end("arrived")
      })
      const five = yield* fetchCall({ url: `${base}/hop/4` })
      expect(five).toMatchObject({ status: "ok", modelOutput: "arrived" })
      expect(five.metadata).toMatchObject({ url: `${base}/final` })
      expect((five.metadata as { redirects: Array<string> }).redirects).toHaveLength(5)

      const six = yield* fetchCall({ url: `${base}/hop/5` })
      expect(six.status).toBe("error")
      expect(six.modelOutput).toContain("redirected more than 5 times")

      const loop = yield* fetchCall({ url: `${base}/loop-a` })
      expect(loop.status).toBe("error")
      expect(loop.modelOutput).toContain("redirects in a loop")
    }).pipe(Effect.provide(system))
  )

  it.live("a slow response hits the call's timeout", () =>
    Effect.gen(function* () {
      const base = yield* startServer((_req, res) => {
        res.writeHead(200, { "content-type": "text/plain" })
        // Never ends: only the call's timeout can return this call (a clock bound would be load-dependent).
        res.write("start")
      })
      const result = yield* fetchCall({ url: `${base}/slow`, timeout: 1 })
      expect(result.status).toBe("error")
      expect(result.modelOutput).toContain("timed out after 1 s")
      expect(result.attempts).toBe(1)
    }).pipe(Effect.provide(system))
  )

  it.live("refuses a body over 5 MB, by Content-Length and while streaming", () =>
    Effect.gen(function* () {
      const chunk = Buffer.alloc(1024 * 1024, "a")
      const base = yield* startServer((_req, res, url) => {
        if (url.pathname === "/declared") {
          res.writeHead(200, { "content-type": "text/plain", "content-length": String(6 * 1024 * 1024) })
          res.end()
          return
        }
        res.writeHead(200, { "content-type": "text/plain" }) // chunked: no length to check up front
        for (let i = 0; i < 6; i++) res.write(chunk)
        res.end()
      })
      const declared = yield* fetchCall({ url: `${base}/declared` })
      expect(declared.status).toBe("error")
      expect(declared.modelOutput).toContain("larger than the 5 MB limit (6291456 bytes)")
      const streamed = yield* fetchCall({ url: `${base}/streamed` })
      expect(streamed.status).toBe("error")
      expect(streamed.modelOutput).toContain("larger than the 5 MB limit")
    }).pipe(Effect.provide(system))
  )

  it.live("retries once after a 503 and after a reset connection; a 404 is not retried", () =>
    Effect.gen(function* () {
      const hits: Record<string, number> = {}
      const base = yield* startServer((req, res, url) => {
        const n = (hits[url.pathname] ?? 0) + 1
        hits[url.pathname] = n
        if (url.pathname === "/flaky" && n === 1) res.writeHead(503, { "content-type": "text/plain" }).end("busy")
        else if (url.pathname === "/reset" && n === 1) req.socket.destroy()
        else if (url.pathname === "/down") res.writeHead(503).end("still busy")
        else if (url.pathname === "/missing") res.writeHead(404).end("no such page")
        else res.writeHead(200, { "content-type": "text/plain" }).end("fine now")
      })
      const flaky = yield* fetchCall({ url: `${base}/flaky` })
      expect(flaky).toMatchObject({ status: "ok", modelOutput: "fine now", attempts: 2 })
      const reset = yield* fetchCall({ url: `${base}/reset` })
      expect(reset).toMatchObject({ status: "ok", modelOutput: "fine now", attempts: 2 })
      const down = yield* fetchCall({ url: `${base}/down` })
      expect(down).toMatchObject({ status: "error", attempts: 2 })
      expect(down.modelOutput).toContain("HTTP 503")
      const missing = yield* fetchCall({ url: `${base}/missing` })
      expect(missing).toMatchObject({ status: "error", attempts: 1 })
      expect(missing.modelOutput).toContain("HTTP 404 Not Found: no such page. The page does not exist")
      expect(hits["/missing"]).toBe(1)
    }).pipe(Effect.provide(system))
  )

  it.live("refuses non-http schemes and malformed URLs with what to do instead", () =>
    Effect.gen(function* () {
      const file = yield* fetchCall({ url: "file:///etc/passwd" })
      expect(file.status).toBe("error")
      expect(file.modelOutput).toContain("only fetches http:// and https:// URLs, not file:. Use read for local files.")
      const ftp = yield* fetchCall({ url: "ftp://example.com/x" })
      expect(ftp.modelOutput).toContain("not ftp:")
      const junk = yield* fetchCall({ url: "not a url" })
      expect(junk.modelOutput).toContain('"not a url" is not a valid URL')
      const slow = yield* fetchCall({ url: "https://example.com", timeout: 500 })
      expect(slow.modelOutput).toContain("timeout must be between 1 and 120 seconds")
    }).pipe(Effect.provide(system))
  )

  it.live("a loopback URL needs approval: denied without it, fetched with it", () =>
    Effect.gen(function* () {
      let hits = 0
      const base = yield* startServer((_req, res) => {
        hits++
        res.writeHead(200, { "content-type": "text/plain" }).end("internal")
      })
      const nobody = yield* fetchCall({ url: base }, "nobody")
      expect(nobody.status).toBe("denied")
      expect(nobody.modelOutput).toContain("resolves to a local or private address (127.0.0.1)")
      const declined = yield* fetchCall({ url: base }, false)
      expect(declined.status).toBe("denied")
      expect(hits).toBe(0)
      const localhost = yield* fetchCall({ url: base.replace("127.0.0.1", "localhost") }, "nobody")
      expect(localhost.status).toBe("denied")
      expect(yield* fetchCall({ url: base })).toMatchObject({ status: "ok", modelOutput: "internal" })
      expect(hits).toBe(1)
    }).pipe(Effect.provide(system))
  )

  it.live("does not follow a redirect to another host that is internal (the approval covered only the first)", () =>
    Effect.gen(function* () {
      const base = yield* startServer((_req, res, url) => {
        if (url.pathname === "/out") res.writeHead(302, { location: "http://10.0.0.1/admin" }).end()
        else res.writeHead(200).end("x")
      })
      const result = yield* fetchCall({ url: `${base}/out` })
      expect(result.status).toBe("error")
      expect(result.modelOutput).toContain("redirected to http://10.0.0.1/admin, a local or private address")
    }).pipe(Effect.provide(system))
  )

  it.live("WebFetch(domain:…) rules through the dispatcher: allow approves an internal host, deny refuses it", () =>
    Effect.gen(function* () {
      let hits = 0
      const base = yield* startServer((_req, res) => {
        hits++
        res.writeHead(200, { "content-type": "text/plain" }).end("internal")
      })
      /** One dispatched call under `rules`; the person (if asked) declines, and every question is kept. */
      const dispatch = (permissions: { allow?: Array<string>; deny?: Array<string> }, url = base) => {
        const asked: Array<ApprovalQuestion> = []
        return Dispatcher.use((d) => d.dispatch({ id: "d", name: "webfetch", args: { url } }, { sessionId: "s" })).pipe(
          Effect.map((result) => ({ result, asked })),
          Effect.provide(
            toolSystem({
              root: process.cwd(),
              outputConfig: OutputConfig.layerWith({}),
              tools: [WebFetchTool],
              config: { permissions },
              approval: Approval.layerTest({ answer: "deny" }, asked)
            }).pipe(Layer.provideMerge(NodeServices.layer))
          )
        )
      }
      const allowed = yield* dispatch({ allow: ["WebFetch(domain:127.0.0.1)"] })
      expect(allowed.result).toMatchObject({ status: "ok", modelOutput: "internal" })
      expect(allowed.result.metadata).toMatchObject({ permission: { rule: "WebFetch(domain:127.0.0.1)" } })
      expect(allowed.asked).toEqual([])
      expect(hits).toBe(1)

      const denied = yield* dispatch({ deny: ["WebFetch(domain:127.0.0.1)"], allow: ["WebFetch"] })
      expect(denied.result.status).toBe("denied")
      expect(denied.result.modelOutput).toContain("The rule WebFetch(domain:127.0.0.1) denies this webfetch call")

      // A rule for another domain does not cover it: the SSRF check asks, and the person declines.
      const other = yield* dispatch({ allow: ["WebFetch(domain:example.com)"] })
      expect(other.result.status).toBe("denied")
      expect(other.asked.map((q) => q.reason)).toEqual([
        `${base.slice("http://".length)} resolves to a local or private address (127.0.0.1); fetching it needs approval.`
      ])
      expect(hits).toBe(1)
    })
  )

  it("classifies addresses and exposes the host for domain rules", () => {
    for (const ip of ["127.0.0.1", "10.1.2.3", "172.16.0.1", "192.168.1.1", "169.254.169.254", "100.64.0.1", "0.0.0.0"])
      expect(isInternalAddress(ip)).toBe(true)
    for (const ip of ["::1", "::", "fe80::1", "fd00::1", "::ffff:127.0.0.1"]) expect(isInternalAddress(ip)).toBe(true)
    for (const ip of ["8.8.8.8", "172.32.0.1", "100.128.0.1", "2606:4700::1111", "::ffff:8.8.8.8"])
      expect(isInternalAddress(ip)).toBe(false)
    expect(webfetchHost({ url: "https://Docs.Example.com:8443/a?b" })).toBe("docs.example.com")
    expect(webfetchHost({ url: "http://[::1]:80/" })).toBe("::1")
    expect(webfetchHost({ url: "file:///x" })).toBeUndefined()
    expect(WebFetchTool.paths({ url: "https://example.org/x" }, undefined as never)).toEqual(["example.org"])
    expect(WebFetchTool.retrySafe).toBe(true)
    // The fetch's own deadline is 30 s by default (at most 120); the call's backstop is 5 s longer.
    const backstop = (args: { url: string; timeout?: number }) =>
      Duration.toMillis(Duration.fromInputUnsafe(WebFetchTool.timeout(args)))
    expect(backstop({ url: "https://example.org/" })).toBe(35_000)
    expect(backstop({ url: "https://example.org/", timeout: 120 })).toBe(125_000)
  })
})
