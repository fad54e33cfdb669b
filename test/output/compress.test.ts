import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { compressed, loadFixtures, survivors, truncated } from "../../bench/compress.ts"
import {
  classifyCommand,
  collapseDuplicates,
  compressForModel,
  isFailureLine,
  stripAnsi
} from "../../src/output/compress/index.ts"
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
    const out = compressed(f.kind, f.raw)
    expect(survivors(out, f.must)).toBe(f.must.length)
    expect(out).not.toContain("\u001b")
    if (f.kind === "log" && countLines(f.raw) > 200) {
      // The target: at least 60% fewer characters than the raw output.
      expect(out.length).toBeLessThanOrEqual(0.4 * f.raw.length)
    }
  })

  it("a log's markers name the output call and the exact stored lines they stand for", () => {
    for (const f of fixtures.filter((x) => x.kind === "log")) {
      const out = compressed(f.kind, f.raw)
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
    const { text } = collapseDuplicates(
      splitLines('a.ts:1:x\nfrom "effect"\n--\nfrom "effect"\n--\nb\nfrom "effect"\n')
    )
    expect(text).toBe('a.ts:1:x\nfrom "effect" [×3]\n--\n--\nb\n')
    const dup = fixtures.find((f) => f.name === "rg-dup")!
    const out = compressed("search", dup.raw)
    for (const line of new Set(dup.raw.split("\n").filter((l) => l !== ""))) expect(out).toContain(line)
  })

  it("a compressed copy still over budget is cut, with a marker that points at a search, not at wrong lines", () => {
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
    expect(out.modelOutput).toContain('search it with output {"id": "c9", "pattern": "<regex>"}')
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
