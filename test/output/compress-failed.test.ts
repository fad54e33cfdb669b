/**
 * Failure lines survive whatever the command: a failed call or a log-looking output is shaped
 * as a log once it is over the budget; a clean run keeps the warnings that are its only
 * diagnostic; an assertion's diff stays with the assertion.
 */
import { NodeServices } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Effect, FileSystem } from "effect"
import {
  type CompressOptions,
  compressForModel,
  compressSpilled,
  failedCall,
  isWarningLine,
  looksLikeLog
} from "../../src/output/compress/index.ts"
import { linesInFile } from "../../src/output/stored-read.ts"
import { countLines } from "../../src/output/truncate.ts"

const options = (failed: boolean, maxChars = 20_000): CompressOptions => ({
  callId: "c1",
  stored: { stored: true },
  maxChars,
  maxLines: 3000,
  direction: "both",
  failed
})
const copy = (kind: string, text: string, failed = false, maxChars?: number) =>
  compressForModel(kind, text, options(failed, maxChars))!.modelOutput

const lines = (from: number, to: number, f: (i: number) => string) =>
  Array.from({ length: to - from + 1 }, (_, k) => `${f(from + k)}\n`).join("")

/** Output a script prints: progress noise with one error and its stack in the middle. */
const scriptOutput =
  lines(1, 3000, (i) => `processed record ${i} of 6000, checksum ${(i * 2654435761) % 1e8}`) +
  "Traceback (most recent call last):\n" +
  '  File "/app/etl/load.py", line 88, in <module>\n' +
  "KeyError: 'customer_id'\n" +
  lines(3001, 6000, (i) => `processed record ${i} of 6000, checksum ${(i * 2654435761) % 1e8}`)

describe("compression keeps failure lines whatever the command", () => {
  it("a failed command of no known kind: its error in the middle survives; the same output succeeding is cut head+tail", () => {
    const failed = copy("other", scriptOutput, true)
    expect(failed).toContain("KeyError: 'customer_id'")
    expect(failed).toContain('File "/app/etl/load.py", line 88')
    expect(failed).toContain('output {"id": "c1", "offset": ')
    expect(failed.length).toBeLessThan(0.1 * scriptOutput.length)
    // A clean exit says nothing about what the output holds: the error survives exiting 0 too.
    const ok = copy("other", scriptOutput, false)
    expect(ok).toContain("KeyError: 'customer_id'")
    expect(ok).toContain('File "/app/etl/load.py", line 88')
    // With no failure line anywhere, the plain head+tail cut, as before (its head runs far past a log's 10 lines).
    const clean = copy("other", scriptOutput.replace(/^(Traceback| {2}File|KeyError).*\n/gm, ""), false)
    expect(clean).toContain("processed record 100 of 6000,")
  })

  it("an output that reads as a log is shaped as one even when the command succeeded (cat app.log)", () => {
    const log =
      lines(1, 2000, (i) => `2026-03-04T10:${String(i % 60).padStart(2, "0")}:00.000Z INFO  GET /items/${i} 200`) +
      "2026-03-04T10:33:01.000Z ERROR payment failed: ECONNRESET\n" +
      "    at Socket.onEnd (/srv/pay/client.js:41:9)\n" +
      lines(2001, 4000, (i) => `2026-03-04T10:${String(i % 60).padStart(2, "0")}:00.000Z INFO  GET /items/${i} 200`)
    const out = copy("cat", log)
    expect(out).toContain("ERROR payment failed: ECONNRESET")
    expect(out).toContain("(/srv/pay/client.js:41:9)")
    expect(out.length).toBeLessThan(0.1 * log.length)
    expect(looksLikeLog(log.slice(0, 5000), log.slice(-5000))).toBe(true)
  })

  it("timestamps alone (a CSV) are not a log; syslog's lines are, though they carry no level word", () => {
    const csv = lines(1, 400, (i) => `2026-03-04 10:${String(i % 60).padStart(2, "0")}:00,sensor-${i % 9},${i * 3}`)
    expect(looksLikeLog(csv, csv)).toBe(false)
    const syslog = lines(
      1,
      400,
      (i) => `Dec  1 20:${String(i % 60).padStart(2, "0")}:08 web1 sshd[${800 + i}]: Accepted key`
    )
    expect(looksLikeLog(syslog, syslog)).toBe(true)
  })

  it("a file's contents that are not a log, and any output within the budget, are not touched", () => {
    const source = lines(1, 4000, (i) => `export const value${i} = compute(${i}) // error handling is elsewhere`)
    expect(looksLikeLog(source.slice(0, 5000), source.slice(-5000))).toBe(false)
    const out = copy("cat", source)
    expect(
      out.startsWith(lines(1, 10, (i) => `export const value${i} = compute(${i}) // error handling is elsewhere`))
    ).toBe(true)
    expect(out).toMatch(/\[… lines \d[\d,]*–\d[\d,]* of 4,000 omitted/)
    // One marker: a plain head+tail cut, not a log's many.
    expect(out.match(/omitted/g)).toHaveLength(1)
    const small = "a\nERROR b\nc\n"
    expect(copy("cat", small, true)).toBe(small)
  })

  it("a diff or a search that exits non-zero keeps its own shape ('differences found', 'no match')", () => {
    const diff = lines(1, 3000, (i) => (i % 2 === 0 ? `+added line ${i}` : `-removed line ${i}`))
    const out = copy("diff", diff, true)
    expect(out.match(/omitted/g)).toHaveLength(1)
  })

  it("a successful log keeps its one warning; a thousand warnings never crowd out an error", () => {
    const clean =
      lines(1, 2000, (i) => `npm silly reify mark ${i} node_modules/dep${i}`) +
      "npm warn EBADENGINE Unsupported engine { package: 'old-engine@2.0.0' }\n" +
      lines(2001, 4000, (i) => `npm silly reify mark ${i} node_modules/dep${i}`) +
      "added 4001 packages in 2s\n"
    const out = copy("log", clean)
    expect(out).toContain("npm warn EBADENGINE Unsupported engine")
    expect(out.length).toBeLessThan(0.1 * clean.length)

    const noisy =
      lines(1, 3000, (i) => `warning: deprecated API used in src/module${i}.c`) +
      "fatal: the linker could not resolve symbol tls_handshake\n" +
      lines(3001, 3500, (i) => `[${i}/3500] compiled`)
    const shaped = copy("log", noisy, true, 8000)
    expect(shaped).toContain("fatal: the linker could not resolve symbol tls_handshake")
    expect(shaped.length).toBeLessThanOrEqual(8000)
    expect(isWarningLine("3 warnings generated.")).toBe(true)
    expect(isWarningLine("Compiled with 0 warnings")).toBe(false)
  })

  it("an assertion's diff stays with it, however far below the assertion line its +/- lines are", () => {
    const context = (n: number) => lines(1, n, (i) => `      field${i}: ${i},`)
    const log =
      lines(1, 500, (i) => `✔ order ${i} (1.0ms)`) +
      "✖ ships an order (1.0ms)\n" +
      "  AssertionError [ERR_ASSERTION]: Expected values to be strictly deep-equal:\n" +
      "  + actual - expected\n" +
      "    {\n" +
      context(25) +
      "  +   status: 'open'\n" +
      "  -   status: 'shipped'\n" +
      context(10) +
      "  +   total: 10\n" +
      "  -   total: 12\n" +
      "    }\n" +
      "      at TestContext.<anonymous> (file:///w/orders.test.mjs:6:10)\n" +
      lines(1, 12, (i) => `      at Test.run (node:internal/test_runner/test:${1400 + i}:25)`) +
      lines(501, 900, (i) => `✔ order ${i} (1.0ms)`)
    const out = copy("log", log, true)
    for (const kept of [
      "+   status: 'open'",
      "-   status: 'shipped'",
      "+   total: 10",
      "-   total: 12",
      "at TestContext.<anonymous> (file:///w/orders.test.mjs:6:10)"
    ])
      expect(out).toContain(kept)
    // A bullet far from any failure is not a diff line.
    const far = `${lines(1, 10, (i) => `FAIL test ${i}`)}${lines(1, 600, (i) => `line ${i}`)}- a bullet\n${lines(1, 600, (i) => `line ${i}`)}`
    expect(copy("log", far, true)).not.toContain("- a bullet")
  })

  it("reads a call's failure from its outcome or its exit code", () => {
    expect(failedCall(true, undefined)).toBe(true)
    expect(failedCall(false, { exitCode: 2 })).toBe(true)
    expect(failedCall(false, { exitCode: 0 })).toBe(false)
    expect(failedCall(false, { stopped: true })).toBe(true)
    expect(failedCall(false, {})).toBe(false)
  })

  it.effect("a spilled output of no known kind that failed is compressed from its file, line by line", () =>
    Effect.gen(function* () {
      const fs = yield* FileSystem.FileSystem
      const dir = yield* fs.makeTempDirectoryScoped({ prefix: "freecode-failed-" })
      const path = `${dir}/out.log`
      yield* fs.writeFileString(path, scriptOutput)
      const view = {
        kind: "spilled" as const,
        head: scriptOutput.slice(0, 10_000),
        tail: scriptOutput.slice(-10_000),
        chars: scriptOutput.length,
        lines: countLines(scriptOutput),
        bytes: scriptOutput.length
      }
      const failed = yield* compressSpilled("other", view, linesInFile(fs, path), options(true))
      expect(failed!.modelOutput).toContain("KeyError: 'customer_id'")
      // Exiting 0 the error survives too: the file is read as a log because a line in it says so.
      const ok = yield* compressSpilled("other", view, linesInFile(fs, path), options(false))
      expect(ok!.modelOutput).toContain("KeyError: 'customer_id'")
      // A file with no failure line keeps the plain cut of its two ends.
      const clean = scriptOutput.replace(/^(Traceback| {2}File|KeyError).*\n/gm, "")
      yield* fs.writeFileString(path, clean)
      const cleanView = {
        ...view,
        head: clean.slice(0, 10_000),
        tail: clean.slice(-10_000),
        chars: clean.length,
        lines: countLines(clean),
        bytes: clean.length
      }
      const plain = yield* compressSpilled("other", cleanView, linesInFile(fs, path), options(false))
      expect(plain!.modelOutput).toContain("processed record 100 of 6000,")
    }).pipe(Effect.provide(NodeServices.layer), Effect.scoped)
  )
})
