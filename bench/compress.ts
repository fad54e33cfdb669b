/**
 * Content-aware compression against the default head+tail truncation, on the real logs in
 * test/fixtures/logs (made by make-fixtures.sh): characters the model gets, and how many of each
 * log's must-survive lines it keeps. Targets: 100% kept; on logs over 200 lines, ≥ 60% fewer chars.
 *   node bench/compress.ts
 */
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { omittedMarker } from "../src/orchestrator/shape.ts"
import { classifyCommand, compressForModel, stripAnsi } from "../src/output/compress/index.ts"
import { defaultOutputSettings } from "../src/output/config.ts"
import { adaptiveTruncate, countLines } from "../src/output/truncate.ts"

export interface Fixture {
  readonly name: string
  readonly command: string
  readonly kind: string
  readonly must: ReadonlyArray<string>
}

export const FIXTURES = join(import.meta.dirname, "../test/fixtures/logs")
export const loadFixtures = (): ReadonlyArray<Fixture & { readonly raw: string }> =>
  (JSON.parse(readFileSync(join(FIXTURES, "manifest.json"), "utf8")) as Array<Fixture>).map((f) => ({
    ...f,
    raw: readFileSync(join(FIXTURES, `${f.name}.log`), "utf8")
  }))

/** Must-survive lines present in `text` (each compared without ANSI codes and surrounding blanks). */
export const survivors = (text: string, must: ReadonlyArray<string>): number => {
  const lines = stripAnsi(text)
    .split("\n")
    .map((l) => l.trim())
  return must.filter((m) => lines.some((l) => l.includes(m.trim()))).length
}

const stored = { stored: true } as const
const { maxChars, maxLines } = defaultOutputSettings

export const compressed = (kind: string, raw: string) =>
  compressForModel(kind, raw, { callId: "c1", stored, maxChars, maxLines, direction: "both" })!.modelOutput
export const truncated = (raw: string) =>
  adaptiveTruncate(raw, { maxChars, maxLines, direction: "both", marker: omittedMarker("c1", stored) }).text

const main = () => {
  const pct = (a: number, b: number) => `${(100 * (1 - a / b)).toFixed(0)}%`
  console.log(
    "| log | kind | lines | raw chars | head+tail: chars (saved) | head+tail: must kept | compressed: chars (saved) | compressed: must kept |"
  )
  console.log("| --- | --- | --- | --- | --- | --- | --- | --- |")
  let mustAll = 0
  let keptTrunc = 0
  let keptComp = 0
  for (const f of loadFixtures()) {
    const kind = classifyCommand(f.command)
    const t = truncated(f.raw)
    const c = compressed(kind, f.raw)
    const st = survivors(t, f.must)
    const sc = survivors(c, f.must)
    mustAll += f.must.length
    keptTrunc += st
    keptComp += sc
    console.log(
      `| ${f.name} | ${kind} | ${countLines(f.raw)} | ${f.raw.length} | ${t.length} (${pct(t.length, f.raw.length)}) | ${st}/${f.must.length} | ${c.length} (${pct(c.length, f.raw.length)}) | ${sc}/${f.must.length} |`
    )
  }
  console.log(`\nmust-survive lines kept: head+tail ${keptTrunc}/${mustAll}, compressed ${keptComp}/${mustAll}`)
}

if (import.meta.main) main()
