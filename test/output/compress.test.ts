import { NodeServices } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Effect, FileSystem } from "effect"
import { compressed, loadFixtures, survivors, truncated } from "../../bench/compress.ts"
import {
  classifyCommand,
  compressForModel,
  compressSpilled,
  isFailureLine,
  logPass,
  stripAnsi
} from "../../src/output/compress/index.ts"
import { linesInFile } from "../../src/output/stored-read.ts"
import { countLines, splitLines } from "../../src/output/truncate.ts"

const fixtures = loadFixtures()

/** Puts the stored lines back where each marker stands; the result must be the whole output. */
const expand = (model: string, stored: ReadonlyArray<string>): string =>
  model.replace(/\[… lines ([\d,]+)–([\d,]+) of [\d,]+ omitted[^\n]*…\]\n/g, (_m, from: string, to: string) =>
    stored.slice(Number(from.replace(/,/g, "")) - 1, Number(to.replace(/,/g, ""))).join("")
  )

describe("content-aware compression on real logs", () => {
  it.each(fixtures.map((f) => [f.name, f] as const))("%s: classified, every must-survive line kept", (_, f) => {
    expect(classifyCommand(f.command)).toBe(f.kind)
    const out = compressed(f.kind, f.raw, f.failed)
    expect(survivors(out, f.must)).toBe(f.must.length)
    expect(out).not.toContain("\u001b")
    // Every log over 200 lines, however it was reached (a service's output, `cat` of a log file).
    if (f.kind !== "search" && f.kind !== "diff" && countLines(f.raw) > 200) {
      // The target: at least 60% fewer characters than the raw output.
      expect(out.length).toBeLessThanOrEqual(0.4 * f.raw.length)
    }
  })

  it("a log's markers name the output call and the exact stored lines they stand for", () => {
    for (const f of fixtures.filter((x) => x.kind === "log" || x.name.startsWith("service"))) {
      const out = compressed(f.kind, f.raw, f.failed)
      const clean = stripAnsi(f.raw)
      expect(expand(out, splitLines(clean))).toBe(clean)
    }
    const noisy = compressed("log", fixtures.find((f) => f.name === "noisy-build")!.raw)
    expect(noisy).toMatch(
      /\[… lines 11–7,309 of 20,002 omitted .* Retrieve them with output \{"id": "c1", "offset": 11, "limit": 200\}/
    )
  })

  it("head+tail truncation loses failure lines compression keeps (the comparison the bench reports)", () => {
    const noisy = fixtures.find((f) => f.name === "noisy-build")!
    expect(survivors(truncated(noisy.raw), noisy.must)).toBeLessThan(noisy.must.length)
    expect(survivors(compressed("log", noisy.raw), noisy.must)).toBe(noisy.must.length)
  })

  it("diffs and file contents pass through untouched but for colour", () => {
    const diff = fixtures.find((f) => f.name === "git-diff")!
    expect(compressed("diff", diff.raw)).toBe(stripAnsi(diff.raw))
    expect(
      compressForModel("cat", "a\nb\n", {
        callId: "c",
        stored: { stored: true },
        maxChars: 100,
        maxLines: 10,
        direction: "both"
      })
    ).toEqual({
      modelOutput: "a\nb\n",
      truncated: false
    })
  })

  it("search results only collapse identical lines: no match is dropped", () => {
    const { modelOutput } = compressForModel(
      "search",
      'a.ts:1:x\nfrom "effect"\n--\nfrom "effect"\n--\nb\nfrom "effect"\n',
      { callId: "c", stored: { stored: true }, maxChars: 1000, maxLines: 100, direction: "both" }
    )!
    expect(modelOutput).toBe('a.ts:1:x\nfrom "effect" [×3]\n--\n--\nb\n')
    const dup = fixtures.find((f) => f.name === "rg-dup")!
    const out = compressed("search", dup.raw)
    for (const line of new Set(dup.raw.split("\n").filter((l) => l !== ""))) expect(out).toContain(line)
  })

  it("more failure lines than the budget holds: the first ones, the tail, and one marker that counts the rest", () => {
    const raw = Array.from({ length: 5000 }, (_, i) => `src/f${i}.ts:1:1 - error TS1: bad ${i}`).join("\n")
    const out = compressForModel("log", raw, {
      callId: "c9",
      stored: { stored: true },
      maxChars: 2000,
      maxLines: 100,
      direction: "both"
    })!
    expect(out.truncated).toBe(true)
    expect(out.modelOutput.length).toBeLessThanOrEqual(2000)
    expect(countLines(out.modelOutput)).toBeLessThanOrEqual(100)
    const lines = out.modelOutput.split("\n")
    expect(lines[0]).toBe("src/f0.ts:1:1 - error TS1: bad 0")
    expect(lines[lines.length - 1]).toBe("src/f4999.ts:1:1 - error TS1: bad 4999")
    // The marker names the exact stored range it stands for, and how many failures are in it.
    const marker =
      /\[… lines ([\d,]+)–([\d,]+) of 5,000 omitted .*Retrieve them with output \{"id": "c9", "offset": (\d+), "limit": 200\}, or search them with output \{"id": "c9", "pattern": "<regex>"\} …\]/.exec(
        out.modelOutput
      )!
    const from = Number(marker[1]!.replace(/,/g, ""))
    const to = Number(marker[2]!.replace(/,/g, ""))
    expect(Number(marker[3])).toBe(from)
    expect(out.modelOutput).toContain(
      `[… ${(to - from + 1).toLocaleString("en-US")} more failure-looking lines did not fit the budget`
    )
    expect(lines).toContain(`src/f${from - 2}.ts:1:1 - error TS1: bad ${from - 2}`)
    expect(lines).toContain(`src/f${to}.ts:1:1 - error TS1: bad ${to}`)
    expect(lines).not.toContain(`src/f${from - 1}.ts:1:1 - error TS1: bad ${from - 1}`)
  })

  it("one implementation for held and spilled outputs: the same lines give the same copy", () =>
    Effect.gen(function* () {
      const fs = yield* FileSystem.FileSystem
      const dir = yield* fs.makeTempDirectoryScoped({ prefix: "freecode-compress-" })
      for (const f of fixtures.filter((x) => x.kind === "log" || x.kind === "search")) {
        const raw = f.raw.endsWith("\n") ? f.raw : `${f.raw}\n`
        yield* fs.writeFileString(`${dir}/${f.name}`, raw)
        const options = {
          callId: "c1",
          stored: { stored: true } as const,
          maxChars: 30_000,
          maxLines: 3_000,
          direction: "both" as const
        }
        const view = {
          kind: "spilled" as const,
          head: "",
          tail: "",
          chars: raw.length,
          lines: countLines(raw),
          bytes: 0
        }
        const spilled = yield* compressSpilled(f.kind, view, linesInFile(fs, `${dir}/${f.name}`), options)
        // Spilled lines lose a "\r"; the fixtures have none, so the copies are equal.
        expect(spilled!.modelOutput).toBe(compressForModel(f.kind, raw, options)!.modelOutput)
      }
    }).pipe(Effect.provide(NodeServices.layer), Effect.scoped))

  it("a spilled diff keeps the head+tail cut of its two ends, colour stripped; a missing file falls back to it", () =>
    Effect.gen(function* () {
      const options = {
        callId: "c2",
        stored: { stored: true } as const,
        maxChars: 400,
        maxLines: 100,
        direction: "both" as const
      }
      const head = Array.from({ length: 50 }, (_, i) => `\u001b[32m+added ${i}\u001b[0m\n`).join("")
      const tail = Array.from({ length: 50 }, (_, i) => `\u001b[31m-removed ${i}\u001b[0m\n`).join("")
      const view = { kind: "spilled" as const, head, tail, chars: 10_000_000, lines: 500_000, bytes: 10_000_000 }
      const diff = (yield* compressSpilled("diff", view, undefined, options))!
      expect(diff.modelOutput).not.toContain("\u001b")
      expect(diff.modelOutput.startsWith("+added 0\n")).toBe(true)
      expect(diff.modelOutput.endsWith("-removed 49\n")).toBe(true)
      expect(diff.modelOutput).toMatch(/of 500,000 omitted/)
      const gone = yield* compressSpilled(
        "log",
        view,
        linesInFile(yield* FileSystem.FileSystem, "/nonexistent/x.out"),
        options
      )
      expect(gone!.modelOutput).toBe(diff.modelOutput)
      expect(yield* compressSpilled("pictures", view, undefined, options)).toBeUndefined()
    }).pipe(Effect.provide(NodeServices.layer)))

  it("a long noisy stream: memory and copy stay within the budget, buried failures survive", () => {
    // 400,000 lines pushed one at a time, as a spilled file is read: the copy never grows past the budget.
    const total = 400_000
    const sink = logPass({
      totalLines: total,
      totalChars: total * 40,
      maxChars: 30_000,
      maxLines: 3_000,
      marker: (r) => `[… lines ${r.fromLine}–${r.toLine} of ${r.totalLines} omitted …]`
    })
    for (let i = 0; i < total; i++) {
      if (i === 123_456) sink.push("src/deep.c:12:3: error: buried failure\n")
      else if (i === 300_000) sink.push("FATAL: another buried failure\n")
      else sink.push(`[${i}] compiling module ${i % 97} ............\n`)
    }
    const { text, collapsed } = sink.finish()
    expect(collapsed).toBe(true)
    expect(text.length).toBeLessThanOrEqual(30_000)
    expect(text).toContain("src/deep.c:12:3: error: buried failure")
    expect(text).toContain("FATAL: another buried failure")
    expect(text).toContain("[… lines 11–123455 of 400000 omitted …]")
    expect(text.endsWith(`[${total - 1}] compiling module ${(total - 1) % 97} ............\n`)).toBe(true)
  })

  it("an over-long kept line is clipped, so one line cannot take the budget", () => {
    const long = `error: ${"x".repeat(100_000)}`
    const out = compressForModel("log", `${long}\nok\n`, {
      callId: "c3",
      stored: { stored: true },
      maxChars: 5_000,
      maxLines: 100,
      direction: "both"
    })!
    expect(out.modelOutput.length).toBeLessThanOrEqual(5_000)
    expect(out.modelOutput).toContain("characters omitted from this line")
    expect(out.modelOutput.startsWith("error: xxx")).toBe(true)
    expect(out.modelOutput.endsWith("ok\n")).toBe(true)
  })

  it("classifies commands by what prints last, past filters and wrappers", () => {
    expect(classifyCommand("git diff HEAD~1")).toBe("diff")
    expect(classifyCommand("git show abc123 | head -100")).toBe("diff")
    expect(classifyCommand("cat src/a.ts")).toBe("cat")
    expect(classifyCommand("head -50 README.md")).toBe("cat")
    expect(classifyCommand("rg -n foo src | head -20")).toBe("search")
    expect(classifyCommand("cat log.txt | grep ERROR")).toBe("search")
    expect(classifyCommand("find . -name '*.ts'")).toBe("search")
    expect(classifyCommand("cd web && CI=1 npm test 2>&1 | tail -80")).toBe("log")
    expect(classifyCommand("timeout 60 cargo test")).toBe("log")
    expect(classifyCommand("python -m pytest -x")).toBe("log")
    expect(classifyCommand("echo 'a && git diff'")).toBe("other")
    expect(classifyCommand("ls -la")).toBe("other")
  })

  it("failure-looking lines: errors, locations, summaries; not a line saying nothing failed", () => {
    for (const line of [
      "error TS2322: nope",
      "  --> src/main.rs:3:18",
      "Traceback (most recent call last):",
      "ValueError: bad",
      "panic: runtime error: index out of range",
      " Tests  3 failed | 301 passed (304)",
      "src/a.ts(3,7): something",
      "make: *** [Makefile:8: broken.o] Error 1"
    ])
      expect(isFailureLine(line)).toBe(true)
    for (const line of ["[12/400] CC obj/a.o", "Compiling foo v0.1.0", "checked: no failures found", "downloading 45%"])
      expect(isFailureLine(line)).toBe(false)
  })

  it("strips colour, cursor and OSC sequences", () =>
    Effect.sync(() => {
      expect(stripAnsi("\u001b[1m\u001b[31merror\u001b[0m: x\u001b]0;title\u0007 \u001b[2K")).toBe("error: x ")
    }))
})
