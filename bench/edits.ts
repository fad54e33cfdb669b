/**
 * The edit corpus (test/fixtures/edits): how many cases give exactly the expected bytes
 * (target ≥ 97%) and how many edit the wrong place or accept a decoy (target 0), then the
 * time one edit takes.
 *   node bench/edits.ts           the report
 *   node bench/edits.ts --cases   every case that is not exact, with what happened
 */
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect, Layer, ManagedRuntime } from "effect"
import { applyEditToBytes } from "../src/edit/apply.ts"
import { WriteFs } from "../src/edit/write-fs.ts"
import { LocalFs } from "../src/fs/local-fs.ts"
import { MemoryFileSystem } from "../src/fs/memory.ts"
import { ReadState } from "../src/read-state/read-state.ts"
import { EditTool } from "../src/tools/edit.ts"
import { cases } from "../test/fixtures/edits/cases.ts"
import { gradeAll, loadFile, summarize } from "../test/fixtures/edits/corpus.ts"
import { nodeLayer } from "../test/fs/layers.ts"
import { header, paired, row, time } from "./lib.ts"

const graded = gradeAll()
const s = summarize(graded)
const pct = (x: number) => `${(x * 100).toFixed(1)}%`
const kinds = new Map<string, { total: number; exact: number }>()
for (const g of graded) {
  const k = kinds.get(g.case.kind) ?? { total: 0, exact: 0 }
  k.total++
  if (g.grade === "exact") k.exact++
  kinds.set(g.case.kind, k)
}
const replacers = new Map<string, number>()
for (const g of graded) if (g.replacer !== undefined) replacers.set(g.replacer, (replacers.get(g.replacer) ?? 0) + 1)

const lines = [
  "### edit corpus",
  "",
  `${s.total} cases: ${s.exact} exact (${pct(s.exactRate)}, target ≥ 97%), ${s.wrongPlace} wrong place or decoy accepted (target 0), ${s.byGrade.refused} refused, ${s.byGrade["wrong-refusal"]} refused for another reason, ${s.byGrade.inexact} landed with other bytes.`,
  "",
  "| mistake class | cases | exact |",
  "| --- | --- | --- |",
  ...[...kinds].sort().map(([kind, k]) => `| ${kind} | ${k.total} | ${k.exact} |`),
  "",
  `Replacers that applied the successful edits: ${[...replacers].map(([r, n]) => `${r} ${n}`).join(", ")}.`,
  ""
]
if (process.argv.includes("--cases")) {
  for (const g of graded) if (g.grade !== "exact") lines.push(`- [${g.grade}] ${g.case.name}: ${g.detail}`)
  lines.push("")
}

const byName = (name: string) => cases.find((c) => c.name === name)!
const timed = async (name: string) => {
  const c = byName(name)
  const bytes = loadFile(c.file)
  return time(`edit: ${name}`, 500, () => applyEditToBytes(bytes, { oldString: c.oldString, newString: c.newString }))
}
const exact = await timed("exact block")
const fuzzy = await timed("stale middle line in C# (CRLF, BOM)")
const miss = await timed("absent text")
lines.push(header, row(exact), row(fuzzy, exact), row(miss, exact), "")

// The whole edit on a real 1 MB file: read, match, atomic write (temp file, fsync, rename),
// fingerprint, diff — against a plain read, replace and writeFileSync.
const dir = mkdtempSync(join(tmpdir(), "bench-edit-"))
const file = join(dir, "big.ts")
const body = Array.from({ length: 16_000 }, (_, i) => `export const value${i} = compute(${i}) // line ${i}`).join("\n")
writeFileSync(file, `${body}\n`)
const runtime = ManagedRuntime.make(Layer.merge(nodeLayer, ReadState.layerWith({ dedup: true })))
let flip = false
let n = 0
const ctx = () => ({ sessionId: "bench", callId: `e${n++}`, root: dir, canSeeImages: false, emit: () => Effect.void })
const [plain, tool] = await paired(
  100,
  [
    "1 MB file: readFileSync + replace + writeFileSync (baseline, not atomic)",
    () => {
      const text = readFileSync(file, "utf8")
      writeFileSync(file, text.replace("compute(8000)", "compute(8000)"))
    }
  ],
  [
    "1 MB file: edit tool (match, atomic write with fsync, fingerprint, diff)",
    () => {
      flip = !flip
      const [from, to] = flip ? ["compute(8000)", "compute(-8000)"] : ["compute(-8000)", "compute(8000)"]
      return runtime.runPromise(EditTool.execute({ filePath: "big.ts", oldString: from, newString: to }, ctx()))
    }
  ]
)
await runtime.dispose()

// The same edit over an in-memory FileSystem (WriteFs's and LocalFs's platform layers): what an
// embedder holding the project in memory pays, no disk and no fsync.
const memoryRuntime = ManagedRuntime.make(
  Layer.mergeAll(LocalFs.layerPlatform, WriteFs.layerPlatform, ReadState.layerWith({ dedup: true })).pipe(
    Layer.provideMerge(MemoryFileSystem.layer({ [file]: `${body}\n` }))
  )
)
let memoryFlip = false
const inMemory = await time("1 MB file: edit tool over an in-memory FileSystem (WriteFs platform layer)", 100, () => {
  memoryFlip = !memoryFlip
  const [from, to] = memoryFlip ? ["compute(8000)", "compute(-8000)"] : ["compute(-8000)", "compute(8000)"]
  return memoryRuntime.runPromise(EditTool.execute({ filePath: "big.ts", oldString: from, newString: to }, ctx()))
})
await memoryRuntime.dispose()
lines.push(header, row(plain), row(tool, plain), row(inMemory, plain), "")
console.log(lines.join("\n"))
if (s.exactRate < 0.97 || s.wrongPlace > 0) process.exitCode = 1
