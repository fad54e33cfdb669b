/**
 * Runs every benchmark and prints a Markdown report (paste it into docs/benchmarks.md).
 *   node bench/run.ts            all
 *   node bench/run.ts read noop  some
 */
import { spawnSync } from "node:child_process"
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs"
import { readFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect, Schema } from "effect"
import { defineTool } from "../src/tool/tool.ts"
import { fmt, header, paired, row, time } from "./lib.ts"
import { expectOk, makeRunner } from "./system.ts"
import { ensureTree, FILES } from "./tree.ts"

const Noop = defineTool({
  id: "noop",
  description: "Does nothing.",
  parameters: Schema.Struct({}),
  concurrencySafe: true,
  execute: () => Effect.succeed({ title: "noop", output: "" })
})

/** What a caller would write to read and number a file without this library. */
const numberDirect = (text: string) =>
  text
    .split("\n")
    .map((line, i) => `${String(i + 1).padStart(6)}\t${line}`)
    .join("\n")

const benchRead = async () => {
  const dir = mkdtempSync(join(tmpdir(), "bench-read-"))
  const file = join(dir, "file.ts")
  const line = "export const value = compute(alpha, beta) // a typical line of code\n"
  writeFileSync(file, line.repeat(Math.ceil(4096 / line.length)).slice(0, 4096))
  // De-dup off: every call really reads the file (an identical re-read is measured below).
  const runner = makeRunner(dir, { env: { FREECODE_READ_DEDUP: "0" } })
  const [direct, ours] = await paired(
    2000,
    [
      "read 4 KB: fs.promises.readFile + number lines (baseline)",
      async () => numberDirect(await readFile(file, "utf8"))
    ],
    [
      "read 4 KB: the whole path (orchestrator → read → store → shaping)",
      async () => expectOk(await runner.call("read", { filePath: file }))
    ]
  )
  const sync = await time("read 4 KB: readFileSync + number lines (for scale)", 2000, () =>
    numberDirect(readFileSync(file, "utf8"))
  )
  await runner.dispose()
  const dedup = makeRunner(dir)
  expectOk(await dedup.call("read", { filePath: file })) // the first read shows the file; later ones point at it
  const reread = await time("read 4 KB again, unchanged: answered by de-duplication", 2000, async () => {
    const result = expectOk(await dedup.call("read", { filePath: file }))
    if (result.metadata.unchanged !== true) throw new Error("expected the de-duplication pointer")
  })
  await dedup.dispose()
  return [
    "### read of a 4 KB file",
    "",
    header,
    row(direct),
    row(ours, direct),
    row(sync, direct),
    row(reread, direct),
    ""
  ].join("\n")
}

const benchNoop = async () => {
  const runner = makeRunner(process.cwd(), { extra: [Noop] })
  const calls = 1000
  const t = await time(`${calls} no-op calls through the orchestrator`, 10, async () => {
    for (let i = 0; i < calls; i++) expectOk(await runner.call("noop", {}))
  })
  await runner.dispose()
  const perSecond = Math.round(calls / (t.medianMs / 1000))
  return [
    "### orchestrator overhead",
    "",
    header,
    row(t),
    "",
    `${perSecond.toLocaleString("en-US")} calls per second (${fmt(t.medianMs / calls)} per call), each through lookup, coercion, decoding, execution, the store and shaping.`,
    ""
  ].join("\n")
}

const benchSearch = async () => {
  const root = ensureTree(join(process.cwd(), "bench", ".tree"))
  const { rgPath } = await import("@vscode/ripgrep")
  const runner = makeRunner(root)
  const rg = (args: ReadonlyArray<string>) => {
    const out = spawnSync(rgPath, ["--no-config", "--no-require-git", "--hidden", "-g", "!.git", ...args], {
      cwd: root,
      maxBuffer: 1 << 30
    })
    if (out.status !== 0) throw new Error(`rg failed: ${out.stderr}`)
    return out.stdout
  }
  const pattern = "helper\\(stream, 42\\)"
  const [rgGrep, ourGrep] = await paired(
    15,
    [`rg -n '${pattern}' (baseline)`, () => rg(["-n", "--no-heading", pattern, "."])],
    [`grep {pattern: '${pattern}'}`, async () => expectOk(await runner.call("grep", { pattern }))]
  )
  const [rgGlob, ourGlob] = await paired(
    15,
    ["rg --files -g '**/*.ts' (baseline)", () => rg(["--files", "-g", "**/*.ts", "."])],
    ["glob {pattern: '**/*.ts'}", async () => expectOk(await runner.call("glob", { pattern: "**/*.ts" }))]
  )
  await runner.dispose()
  return [
    `### grep and glob on a tree of ${FILES.toLocaleString("en-US")} files`,
    "",
    header,
    row(rgGrep),
    row(ourGrep, rgGrep),
    row(rgGlob),
    row(ourGlob, rgGlob),
    ""
  ].join("\n")
}

const benches: Record<string, () => Promise<string>> = { read: benchRead, noop: benchNoop, search: benchSearch }
const wanted = process.argv.slice(2).length > 0 ? process.argv.slice(2) : Object.keys(benches)
const cpu = readFileSync("/proc/cpuinfo", "utf8").match(/model name\s*:\s*(.*)/)?.[1] ?? "unknown CPU"
console.log(`Node ${process.version}, ${cpu}, ${new Date().toISOString().slice(0, 10)}\n`)
for (const name of wanted) {
  const bench = benches[name]
  if (bench === undefined) throw new Error(`unknown benchmark ${name}; choose from ${Object.keys(benches).join(", ")}`)
  console.log(await bench())
}
