/**
 * Every cut of text lands on a code-point boundary: random text rich in astral characters
 * (emoji, CJK extension B) goes through each cut in the project, at random sizes, and what
 * comes out is always well-formed UTF-16 (no lone surrogate). Seeded and bounded.
 */
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { Effect, Layer, Result, Schema } from "effect"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { windows } from "../../src/events/events.ts"
import { convertMcpTool, MAX_DESCRIPTION_CHARS } from "../../src/mcp/convert.ts"
import { compressForModel } from "../../src/output/compress/index.ts"
import { omittedMarker } from "../../src/output/omitted-marker.ts"
import { adaptiveTruncate, countLines, tailCap } from "../../src/output/truncate.ts"
import { truncateSpilled } from "../../src/output/truncate-spilled.ts"
import { ReadState } from "../../src/read-state/read-state.ts"
import { clip, cutEnd, cutStart, headOf, sliceWhole, tailOf } from "../../src/text/cut.ts"
import { defineTool } from "../../src/tool/tool.ts"
import { ReadTool } from "../../src/tools/read.ts"
import { cutLine } from "../../src/tools/search/backend.ts"
import { nodeLayer } from "../fs/layers.ts"
import { makeCtx, run } from "../tools/helpers.ts"

const SEED = 19
const params = { seed: SEED, numRuns: 150 }

/** Text where a random cut is likely to fall inside a pair: mostly astral, some ASCII and newlines. */
const unit = fc.oneof(
  { weight: 5, arbitrary: fc.integer({ min: 0x1f300, max: 0x1faff }).map((c) => String.fromCodePoint(c)) },
  { weight: 1, arbitrary: fc.integer({ min: 0x20000, max: 0x2a6df }).map((c) => String.fromCodePoint(c)) },
  { weight: 2, arbitrary: fc.constantFrom("a", "Z", " ", "é", "中", "\n") }
)
const astral = (maxLength = 400) => fc.array(unit, { maxLength }).map((units) => units.join(""))
const size = fc.integer({ min: 0, max: 450 })

const wellFormed = (s: string) => s.isWellFormed()

describe("cuts on code-point boundaries", () => {
  it("the helpers: cutEnd, cutStart, headOf, tailOf, clip, sliceWhole", () => {
    fc.assert(
      fc.property(astral(), size, size, (text, a, b) => {
        const end = cutEnd(text, a)
        const start = cutStart(text, a)
        expect(end <= Math.min(a, text.length) && end >= Math.min(a, text.length) - 1).toBe(true)
        expect(start >= Math.min(a, text.length) && start <= Math.min(a, text.length) + 1).toBe(true)
        for (const piece of [
          text.slice(0, end),
          text.slice(start),
          headOf(text, a),
          tailOf(text, a),
          sliceWhole(text, a, b)
        ])
          expect(wellFormed(piece)).toBe(true)
        expect(headOf(text, a).length).toBeLessThanOrEqual(a)
        expect(tailOf(text, a).length).toBeLessThanOrEqual(a)
        const clipped = clip(text, a + 1)
        expect(wellFormed(clipped)).toBe(true)
        expect(clipped.length).toBeLessThanOrEqual(a + 1)
      }),
      params
    )
  })

  it("truncation, the UI cap and a spilled output's two ends, in every direction", () => {
    const marker = omittedMarker("c1", { stored: true })
    fc.assert(
      fc.property(
        astral(),
        size,
        fc.constantFrom("head", "tail", "both") as fc.Arbitrary<"head" | "tail" | "both">,
        (text, max, direction) => {
          const maxChars = max + 120 // room for the marker
          const cut = adaptiveTruncate(text, { maxChars, maxLines: 1 + (max % 7), direction, marker })
          expect(wellFormed(cut.text)).toBe(true)
          expect(wellFormed(tailCap(text, max))).toBe(true)
          const view = {
            kind: "spilled" as const,
            head: headOf(text, Math.floor(text.length / 2)),
            tail: tailOf(text, Math.floor(text.length / 2)),
            chars: text.length * 3,
            lines: countLines(text) * 3 + 1,
            bytes: text.length * 9
          }
          expect(wellFormed(truncateSpilled(view, { maxChars, maxLines: 1 + (max % 7), direction, marker }).text)).toBe(
            true
          )
        }
      ),
      params
    )
  })

  it("compression's clipped lines and budgets, for logs, search results and other output", () => {
    fc.assert(
      fc.property(astral(1200), size, fc.constantFrom("log", "search", "other", "cat"), (text, max, kind) => {
        const copy = compressForModel(kind, text, {
          callId: "c1",
          stored: { stored: true },
          maxChars: max + 400,
          maxLines: 3 + (max % 20),
          direction: "both"
        })
        expect(wellFormed(copy!.modelOutput)).toBe(true)
      }),
      params
    )
  })

  it("event windows, grep's match lines and MCP tool descriptions", () => {
    fc.assert(
      fc.property(astral(), fc.integer({ min: 1, max: 64 }), (text, windowSize) => {
        const ws = windows(text, windowSize)
        expect(ws.map((w) => w.chunk).join("")).toBe(text)
        for (const w of ws) expect(wellFormed(w.chunk)).toBe(true)
        expect(wellFormed(cutLine(text, windowSize))).toBe(true)
      }),
      params
    )
    fc.assert(
      fc.property(astral(40), fc.integer({ min: 0, max: 3 }), (piece, pad) => {
        // Over 2,048 characters, with astral characters around the cut.
        const description = `${"x".repeat(MAX_DESCRIPTION_CHARS - 10 + pad)}${piece}${"🎉".repeat(20)}`
        const converted = convertMcpTool(
          { name: "srv", trusted: true, maxCallDuration: "10 seconds" } as never,
          { name: "t", description, inputSchema: { type: "object" }, annotations: {} },
          () => Effect.die("not called")
        )
        if (Result.isFailure(converted)) throw new Error(converted.failure)
        const cut = converted.success.tool.description
        expect(cut.length).toBeLessThanOrEqual(MAX_DESCRIPTION_CHARS)
        expect(wellFormed(cut)).toBe(true)
      }),
      { seed: SEED, numRuns: 40 }
    )
  })

  it("a decode error's cut of the value that came", () => {
    const Count = defineTool({
      id: "count",
      description: "count",
      parameters: Schema.Struct({ n: Schema.Number }),
      execute: () => Effect.succeed({ title: "", output: "" })
    })
    fc.assert(
      fc.property(astral(120), (text) => {
        const decoded = Count.decode({ n: text })
        if (Result.isSuccess(decoded)) throw new Error("a string is not a number")
        expect(wellFormed(decoded.failure.message)).toBe(true)
      }),
      { seed: SEED, numRuns: 60 }
    )
  })

  it("read's 2,000-character line cut, on real files", async () => {
    const root = NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "freecode-cut-"))
    const layer = Layer.merge(nodeLayer, ReadState.layerWith({ dedup: false }))
    try {
      await fc.assert(
        fc.asyncProperty(astral(60), fc.integer({ min: 1990, max: 2000 }), async (piece, lead) => {
          const file = NodePath.join(root, "long.txt")
          NodeFs.writeFileSync(file, `${"a".repeat(lead)}${piece.replaceAll("\n", " ")}${"😀".repeat(50)}\nshort\n`)
          const out = await Effect.runPromise(
            run(ReadTool, { filePath: file }, makeCtx(root)).pipe(Effect.provide(layer))
          )
          expect(wellFormed(out.output)).toBe(true)
          expect(out.output).toContain("chars cut]")
        }),
        { seed: SEED, numRuns: 25 }
      )
    } finally {
      NodeFs.rmSync(root, { recursive: true, force: true })
    }
  })
})
