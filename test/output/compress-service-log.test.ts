/**
 * A service's log from a command that exits 0: 20,000 lines whose noise names source files,
 * timeouts and "not found" on every other line, with four ERROR lines and their stack traces in
 * the middle. The noise that only might be a failure must not crowd out the lines that say one
 * happened, held in memory or read from a spilled file.
 */
import { NodeServices } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Effect, FileSystem } from "effect"
import { type CompressOptions, compressForModel, compressSpilled } from "../../src/output/compress/index.ts"
import { linesInFile } from "../../src/output/stored-read.ts"
import { countLines } from "../../src/output/truncate.ts"

/** Seeded, so every run is the same log. */
const random = (seed: number) => () => {
  seed = (seed * 1103515245 + 12345) % 2147483648
  return seed / 2147483648
}

interface Incident {
  readonly lines: ReadonlyArray<string>
}

/** Four incidents as four runtimes print them: Java, Node, Python, Go. */
const incidents = (at: (i: number) => string): ReadonlyArray<Incident> => [
  {
    lines: [
      `${at(0)} ERROR [worker-3] c.a.pay.Checkout: failed to charge order 5512`,
      "com.acme.pay.PaymentGatewayException: upstream returned 502",
      "\tat com.acme.pay.GatewayClient.charge(GatewayClient.java:211)",
      "\tat com.acme.orders.Checkout.run(Checkout.java:88)",
      "Caused by: java.net.SocketTimeoutException: Read timed out",
      "\tat java.base/java.net.SocketInputStream.read(SocketInputStream.java:168)",
      "\t... 14 more"
    ]
  },
  {
    lines: [
      `${at(1)} ERROR [api] unhandled rejection in /v2/invoices`,
      "TypeError: Cannot read properties of undefined (reading 'total')",
      "    at renderInvoice (/srv/api/src/invoices/render.js:42:19)",
      "    at async handler (/srv/api/src/routes/invoices.js:17:5)"
    ]
  },
  {
    lines: [
      `${at(2)} ERROR [etl] job nightly-load crashed`,
      "Traceback (most recent call last):",
      '  File "/app/etl/load.py", line 88, in <module>',
      "    rows = fetch(batch)",
      '  File "/app/etl/source.py", line 31, in fetch',
      "    return resp.json()['rows']",
      "KeyError: 'rows'"
    ]
  },
  {
    lines: [
      `${at(3)} FATAL [indexer] panic: runtime error: index out of range [7] with length 7`,
      "goroutine 41 [running]:",
      "main.(*Indexer).flush(0xc000112000)",
      "\t/build/indexer/flush.go:77 +0x1d4",
      "main.main()",
      "\t/build/indexer/main.go:23 +0x85"
    ]
  }
]

const serviceLog = (): { readonly text: string; readonly kept: ReadonlyArray<string> } => {
  const rnd = random(20_000)
  const ts = (i: number) => new Date(Date.UTC(2026, 11, 1, 10) + i * 137).toISOString()
  const found = incidents((k) => ts(4_000 + k * 3_000))
  const out: Array<string> = []
  for (let i = 0; i < 20_000; i++) {
    const k = [4_000, 7_000, 10_000, 13_000].indexOf(i)
    if (k >= 0) out.push(...found[k]!.lines)
    const r = rnd()
    const worker = Math.floor(rnd() * 20)
    if (r < 0.6)
      out.push(
        `${ts(i)} INFO  [http-${worker}] c.a.web.RequestLog: GET /api/orders/${i} 200 ${Math.floor(rnd() * 80)}ms`
      )
    else if (r < 0.8)
      out.push(
        `${ts(i)} DEBUG [pool-${worker % 4}] c.a.repo.OrderRepo: select order ${i} (OrderRepo.java:${40 + (i % 30)})`
      )
    else if (r < 0.93)
      out.push(`${ts(i)} INFO  [cache] c.a.cache.Refresher: refreshed ${i % 500} entries, not found: ${i % 3}`)
    else
      out.push(
        `${ts(i)} WARN  [http-${worker}] c.a.web.RequestLog: slow GET /api/orders/${i} took ${1000 + (i % 900)}ms (timeout 3000ms)`
      )
  }
  return { text: `${out.join("\n")}\n`, kept: found.flatMap((f) => f.lines) }
}

const options: CompressOptions = {
  callId: "svc",
  stored: { stored: true },
  maxChars: 30_000,
  maxLines: 3_000,
  direction: "both",
  failed: false
}

const { text, kept } = serviceLog()

describe("a long service log from a command that exits 0", () => {
  it("keeps every ERROR and FATAL line and its stack trace, as a command's output and as `cat app.log`", () => {
    expect(countLines(text)).toBeGreaterThan(20_000)
    for (const kind of ["other", "cat"]) {
      const copy = compressForModel(kind, text, options)!
      expect(copy.modelOutput.length).toBeLessThanOrEqual(options.maxChars)
      expect(kept.filter((line) => !copy.modelOutput.includes(line))).toEqual([])
    }
  })

  it("keeps them when the output spilled to a file and is read line by line", () =>
    Effect.gen(function* () {
      const fs = yield* FileSystem.FileSystem
      const dir = yield* fs.makeTempDirectoryScoped({ prefix: "freecode-svc-" })
      const path = `${dir}/out.log`
      yield* fs.writeFileString(path, text)
      const view = {
        kind: "spilled" as const,
        head: text.slice(0, 10_000),
        tail: text.slice(-10_000),
        chars: text.length,
        lines: countLines(text),
        bytes: text.length
      }
      const copy = yield* compressSpilled("other", view, linesInFile(fs, path), options)
      expect(copy!.modelOutput.length).toBeLessThanOrEqual(options.maxChars)
      expect(kept.filter((line) => !copy!.modelOutput.includes(line))).toEqual([])
    }).pipe(Effect.provide(NodeServices.layer), Effect.scoped))

  it("in a much smaller budget, the strong lines still come before the noise that only might be failures", () => {
    const copy = compressForModel("other", text, { ...options, maxChars: 12_000, maxLines: 400 })!
    expect(copy.modelOutput.length).toBeLessThanOrEqual(12_000)
    const errors = kept.filter((line) => /ERROR|FATAL/.test(line))
    expect(errors.filter((line) => !copy.modelOutput.includes(line))).toEqual([])
  })
})
