/**
 * webfetch on a 1 MB HTML page served on 127.0.0.1: the HTML→markdown conversion alone, and the
 * whole call through the orchestrator (fetch, cap, convert, store, shape).
 *   node bench/webfetch.ts
 */
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { Effect, ManagedRuntime } from "effect"
import { ToolSystem } from "../layers/live.ts"
import { Orchestrator } from "../src/orchestrator/orchestrator.ts"
import { WebFetchTool } from "../src/tools/webfetch.ts"
import { htmlToMarkdownWithImages } from "../src/web/convert.ts"
import { bigPage } from "../test/fixtures/web/big-page.ts"
import { header, row, time } from "./lib.ts"

const page = bigPage(1024 * 1024)
const server = createServer((_req, res) => {
  res.writeHead(200, { "content-type": "text/html; charset=utf-8" })
  res.end(page)
})
await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/big`

const runtime = ManagedRuntime.make(ToolSystem.layer({ root: process.cwd(), tools: [WebFetchTool] }))
let n = 0
const fetchOnce = () =>
  runtime.runPromise(
    Orchestrator.use((o) =>
      o.execute(
        { id: `w${n++}`, name: "webfetch", args: { url } },
        { sessionId: "bench", approve: () => Effect.succeed(true) }
      )
    )
  )
const first = await fetchOnce()
if (first.status !== "ok") throw new Error(`webfetch failed: ${first.modelOutput}`)

const convert = await time("htmlToMarkdown, 1 MB page", 20, () => htmlToMarkdownWithImages(page, url))
const call = await time("webfetch call, 1 MB page over loopback", 20, fetchOnce)
console.log(`page: ${page.length} bytes → markdown ${htmlToMarkdownWithImages(page, url).markdown.length} chars\n`)
console.log(header)
console.log(row(convert))
console.log(row(call))

await runtime.dispose()
server.close()
