/**
 * glob and grep with the warm index beside plain rg and the walk, in one run: the bench's
 * 25,000-file tree (bench/tree.ts) and a generated large tree in a temp folder (default 300,000
 * files; `SEARCH_BENCH_FILES=N` to change it, 0 for none). The first call (no index yet: rg
 * answers while the build starts), repeated calls, the index's build time and memory (with
 * --expose-gc, after a collection). Figures: docs/benchmarks.md.
 *
 *   node --expose-gc bench/search.ts
 */
import { existsSync, mkdirSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { NodeServices } from "@effect/platform-node"
import { Effect, Layer } from "effect"
import { LocalFs } from "../src/fs/local-fs.ts"
import type { Tool, ToolContext } from "../src/tool/tool.ts"
import { GlobTool } from "../src/tools/glob.ts"
import { GrepTool } from "../src/tools/grep.ts"
import { CurrentSearchBackend } from "../src/tools/search/auto.ts"
import type { SearchBackend, SearchRequirements } from "../src/tools/search/backend.ts"
import { type IndexedBackend, searchIndexLayer } from "../src/tools/search/indexed.ts"
import { loadRipgrepPath, makeRipgrepBackend } from "../src/tools/search/ripgrep.ts"
import { walkBackend } from "../src/tools/search/walk.ts"
import { fmt, time } from "./lib.ts"
import { ensureTree } from "./tree.ts"

const LARGE = Number(process.env.SEARCH_BENCH_FILES ?? 300_000)

/**
 * A large tree in a temp folder (kept for the next run): 100 files a folder, three levels,
 * ~100 bytes a file, and a .gitignore. Written synchronously, ~1 minute for 300,000 files.
 */
const ensureLarge = (files: number): string => {
  const root = join(tmpdir(), `freecode-search-bench-${files}`)
  const marker = join(root, ".complete")
  if (existsSync(marker)) return root
  rmSync(root, { recursive: true, force: true })
  mkdirSync(root, { recursive: true })
  writeFileSync(join(root, ".gitignore"), "out/\n*.log\n")
  for (let i = 0; i < files; i++) {
    const dir = join(root, `a${Math.floor(i / 10_000)}`, `b${Math.floor(i / 100) % 100}`)
    if (i % 100 === 0) mkdirSync(dir, { recursive: true })
    const ext = i % 3 === 0 ? "ts" : i % 3 === 1 ? "py" : "md"
    writeFileSync(
      join(dir, `f${i}.${ext}`),
      `// file ${i}\nexport const value${i} = compute(${i % 97})\nfunction helper${i % 50}(x) { return x }\n`
    )
  }
  writeFileSync(marker, "")
  return root
}

const ctx = (root: string): ToolContext => ({
  sessionId: "bench",
  callId: "bench",
  root,
  canSeeImages: false,
  emit: () => Effect.void
})

/** What the process holds beyond the heap too: the n-gram filters live in ArrayBuffers. */
const memory = () => {
  globalThis.gc?.()
  const m = process.memoryUsage()
  return { heap: m.heapUsed, buffers: m.arrayBuffers, rss: m.rss }
}

type Call = readonly [string, Tool<SearchRequirements>, Record<string, unknown>]

/** Median of `runs` timed calls after `warmup` untimed ones. */
const timeRuns = async (runs: number, warmup: number, body: () => Promise<unknown>): Promise<number> =>
  (await time("", runs, body, warmup)).medianMs

const mb = (bytes: number) => `${(bytes / 1e6).toFixed(1)} MB`

const benchTree = async (label: string, root: string, calls: ReadonlyArray<Call>, runs: number, walkRuns: number) => {
  const rgBackend = makeRipgrepBackend(await Effect.runPromise(loadRipgrepPath))
  const before = memory()
  const layer = searchIndexLayer(root).pipe(Layer.provideMerge(Layer.merge(LocalFs.layerNative, NodeServices.layer)))
  const lines: Array<string> = [
    `### ${label}`,
    "",
    "| call | rg | walk | index | index ÷ rg |",
    "| --- | --- | --- | --- | --- |"
  ]
  const program = Effect.gen(function* () {
    const indexed = (yield* CurrentSearchBackend) as IndexedBackend
    const services = yield* Effect.context<LocalFs>()
    const call = <R>(tool: Tool<R>, args: Record<string, unknown>, backend: SearchBackend) =>
      Effect.runPromiseWith(services)(
        Effect.suspend(() => {
          const decoded = tool.decode(args)
          if (decoded._tag !== "Success") throw new Error("decode")
          return tool.execute(decoded.success, ctx(root))
        }).pipe(Effect.provideService(CurrentSearchBackend, backend)) as Effect.Effect<unknown, unknown, LocalFs>
      )
    // The first call: the index is not built yet, rg answers and the build starts behind it.
    const firstRg = yield* Effect.promise(() => timeRuns(1, 0, () => call(GlobTool, { pattern: "*.ts" }, rgBackend)))
    const started = performance.now()
    yield* Effect.promise(() => call(GlobTool, { pattern: "*.ts" }, indexed))
    const firstMs = performance.now() - started
    // The build starts once that call has its answer.
    while (indexed.index.state() === "idle" || indexed.index.state() === "building") yield* Effect.sleep(10)
    const listMs = performance.now() - started
    while (indexed.index.state() === "ready" && !indexed.index.contentSize().ready) yield* Effect.sleep(10)
    const contentMs = performance.now() - started
    const after = memory()
    for (const [name, tool, args] of calls) {
      const rg = yield* Effect.promise(() => timeRuns(runs, 1, () => call(tool, args, rgBackend)))
      const walk = yield* Effect.promise(() => timeRuns(walkRuns, 0, () => call(tool, args, walkBackend)))
      const idx = yield* Effect.promise(() => timeRuns(runs, 1, () => call(tool, args, indexed)))
      lines.push(`| ${name} | ${fmt(rg)} | ${fmt(walk)} | ${fmt(idx)} | ${(idx / rg).toFixed(2)}× |`)
    }
    const content = indexed.index.contentSize()
    lines.push(
      "",
      `First call (glob \`*.ts\`, the index not built): rg ${fmt(firstRg)}, through the index ${fmt(firstMs)}.`,
      `Index: ${indexed.index.state()}, ${indexed.index.size().toLocaleString("en-US")} entries; file list built in ${fmt(listMs)}, n-gram filters by ${fmt(contentMs)} (${content.files.toLocaleString("en-US")} files, ${mb(content.bytes)}${content.ready ? "" : ", not ready"}).`,
      `Memory after the build: heap +${mb(after.heap - before.heap)}, array buffers +${mb(after.buffers - before.buffers)}, RSS +${mb(after.rss - before.rss)}.`,
      ""
    )
  })
  await Effect.runPromise(Effect.scoped(Effect.provide(program, layer)) as Effect.Effect<void>)
  return lines.join("\n")
}

const SMALL_CALLS: ReadonlyArray<Call> = [
  ["glob `**/*.ts`", GlobTool, { pattern: "**/*.ts" }],
  ["glob `*.md` (name only)", GlobTool, { pattern: "*.md" }],
  ["grep literal `helper(stream, 42)`", GrepTool, { pattern: "helper\\(stream, 42\\)" }],
  ["grep regex with literals `handleCache\\w+\\(token`", GrepTool, { pattern: "handleCache\\w+\\(token" }],
  ["grep regex without literals `\\(\\d{2}\\)`", GrepTool, { pattern: "\\(\\d{2}\\)" }]
]

const LARGE_CALLS: ReadonlyArray<Call> = [
  ["glob `**/*.ts`", GlobTool, { pattern: "**/*.ts" }],
  ["glob `*.md` (name only)", GlobTool, { pattern: "*.md" }],
  ["grep literal `value123457 = compute`", GrepTool, { pattern: "value123457 = compute" }],
  ["grep regex with literals `value2999\\d+ =`", GrepTool, { pattern: "value2999\\d+ =" }],
  ["grep regex without literals `\\(\\d{2}\\)`", GrepTool, { pattern: "\\(\\d{2}\\)" }]
]

const main = async () => {
  const small = ensureTree(join(process.cwd(), "bench", ".tree"))
  const generating = performance.now()
  const large = LARGE > 0 ? ensureLarge(LARGE) : undefined
  console.log(`(large tree ready in ${fmt(performance.now() - generating)})`)
  if (process.env.SEARCH_BENCH_GENERATE_ONLY === "1") return
  const runs = Number(process.env.SEARCH_BENCH_RUNS ?? 7)
  console.log(await benchTree("the bench tree (25,000 files)", small, SMALL_CALLS, runs, 3))
  if (large === undefined) return
  console.log(
    await benchTree(
      `a generated tree (${LARGE.toLocaleString("en-US")} files)`,
      large,
      LARGE_CALLS,
      Math.min(runs, 3),
      1
    )
  )
}

await main()
