/**
 * Content-aware compression against the default head+tail truncation, on the real logs in
 * test/fixtures/logs (made by make-fixtures.sh): characters the model gets, and how many of each
 * log's must-survive lines it keeps. Targets: 100% kept; on logs over 200 lines, ≥ 60% fewer chars.
 * Then a log too large to hold (SPILLED_MB, default 200), compressed from its file line by line:
 * wall time against only reading the lines, and the peak RSS it adds (bounded by the budget).
 *   node bench/compress.ts
 */
import { closeSync, openSync, readFileSync, rmSync, writeSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { NodeServices } from "@effect/platform-node"
import { Effect, FileSystem } from "effect"
import { classifyCommand, compressForModel, compressSpilled, stripAnsi } from "../src/output/compress/index.ts"
import { defaultOutputSettings } from "../src/output/config.ts"
import { omittedMarker } from "../src/output/omitted-marker.ts"
import { linesInFile } from "../src/output/stored-read.ts"
import { adaptiveTruncate, countLines } from "../src/output/truncate.ts"
import { header, row, time } from "./lib.ts"

export interface Fixture {
  readonly name: string
  /** The log file's name when it is another entry's (the same log, reached by another command). */
  readonly log?: string
  readonly command: string
  readonly kind: string
  /** Whether the command failed (non-zero exit, timeout): compression keeps failure lines then. */
  readonly failed: boolean
  readonly must: ReadonlyArray<string>
}

export const FIXTURES = join(import.meta.dirname, "../test/fixtures/logs")
export const loadFixtures = (): ReadonlyArray<Fixture & { readonly raw: string }> =>
  (JSON.parse(readFileSync(join(FIXTURES, "manifest.json"), "utf8")) as Array<Fixture>).map((f) => ({
    ...f,
    raw: readFileSync(join(FIXTURES, `${f.log ?? f.name}.log`), "utf8")
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

export const compressed = (kind: string, raw: string, failed = false) =>
  compressForModel(kind, raw, { callId: "c1", stored, maxChars, maxLines, direction: "both", failed })!.modelOutput
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
    const c = compressed(kind, f.raw, f.failed)
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
  for (const f of loadFixtures()) {
    const c = compressed(classifyCommand(f.command), f.raw, f.failed)
    const lost = f.must.filter((m) => survivors(c, [m]) === 0)
    for (const l of lost) console.log(`lost in ${f.name}: ${l}`)
  }
}

/** Writes a noisy build log of about `mb` MB with two failures buried in it, 1 MiB at a time. */
const writeBigLog = (path: string, mb: number): { readonly chars: number; readonly lines: number } => {
  const fd = openSync(path, "w")
  let chars = 0
  let lines = 0
  let batch = ""
  const total = Math.round((mb * 1e6) / 48)
  for (let i = 1; i <= total; i++) {
    batch +=
      i === Math.floor(total / 3)
        ? "src/deep/parser.c:412:9: error: expected ';' before '}' token\n"
        : i === Math.floor((2 * total) / 3)
          ? "FATAL: checksum mismatch in chunk 17\n"
          : `[${i}/${total}] CC obj/module_${i % 97}/file_${i}.o  ${(i * 2654435761) % 1e8}\n`
    lines++
    if (batch.length >= 1 << 20 || i === total) {
      chars += batch.length
      writeSync(fd, batch)
      batch = ""
    }
  }
  closeSync(fd)
  return { chars, lines }
}

const spilled = async (mb: number) => {
  const path = join(tmpdir(), `freecode-bench-compress-${process.pid}.log`)
  const { chars, lines } = writeBigLog(path, mb)
  const view = { kind: "spilled" as const, head: "", tail: "", chars, lines, bytes: chars }
  const run = <A>(effect: (fs: FileSystem.FileSystem) => Effect.Effect<A>) =>
    Effect.runPromise(
      Effect.gen(function* () {
        return yield* effect(yield* FileSystem.FileSystem)
      }).pipe(Effect.provide(NodeServices.layer))
    )
  const peakMb = () => process.resourceUsage().maxRSS / 1024
  const rssBefore = peakMb()
  // One after the other, not interleaved: the peak RSS is the process's, and only grows.
  const read = await time("read the lines only", 2, () => run((fs) => Effect.ignore(linesInFile(fs, path)(() => true))))
  const rssRead = peakMb()
  let copy = ""
  const compress = await time("compress (log) from the file", 2, () =>
    run((fs) =>
      Effect.map(
        compressSpilled("log", view, linesInFile(fs, path), {
          callId: "c1",
          stored,
          maxChars,
          maxLines,
          direction: "both"
        }),
        (c) => {
          copy = c!.modelOutput
        }
      )
    )
  )
  const rssCompress = peakMb()
  rmSync(path, { force: true })
  console.log(`\nA ${(chars / 1e6).toFixed(0)} MB log (${lines.toLocaleString("en-US")} lines) spilled to a file:\n`)
  console.log(header)
  console.log(row(read))
  console.log(row(compress, read))
  const kept = ["src/deep/parser.c:412:9: error", "FATAL: checksum mismatch"].filter((l) => copy.includes(l)).length
  console.log(
    `\nmodel copy: ${copy.length} chars (budget ${maxChars}), buried failures kept ${kept}/2. Peak RSS: ${rssBefore.toFixed(0)} MB before, ${rssRead.toFixed(0)} MB after reading the lines, ${rssCompress.toFixed(0)} MB after compressing them`
  )
}

if (import.meta.main) {
  main()
  if (process.env.SPILLED_MB === "0") process.exit(0)
  await spilled(Number(process.env.SPILLED_MB ?? 200))
}
