/**
 * The bound on a model's regex (src/text/regex.ts, RE2JS): a hostile pattern on long input,
 * against the backtracking engine it replaced, and what the linear engine costs on ordinary
 * patterns over many lines (the `output` tool's search of a stored output).
 *   node bench/regex.ts
 */
import { compileModelRegex, isRefusal } from "../src/text/regex.ts"
import { header, row, time } from "./lib.ts"

const model = (pattern: string) => {
  const r = compileModelRegex(pattern)
  if (isRefusal(r)) throw new Error(r.message)
  return r
}

const hostile = async () => {
  console.log("`(a+)+$` on a line of n a's and a '!' (no match):\n")
  console.log("| n | V8 RegExp (backtracking) | RE2JS (linear) |")
  console.log("| --- | --- | --- |")
  const re2 = model("(a+)+$")
  const v8 = /(a+)+$/
  for (const n of [20, 22, 24, 26, 1_000, 100_000, 1_000_000]) {
    const line = `${"a".repeat(n)}!`
    // Each extra a doubles V8's time: past 26 it is measured no further (28 takes seconds, 40 hours).
    const v8ms = n <= 26 ? `${(await time("v8", 3, () => v8.test(line))).medianMs.toFixed(1)} ms` : "not run (2^n)"
    const re2ms = (await time("re2", 3, () => re2.test(line))).medianMs.toFixed(2)
    console.log(`| ${n.toLocaleString("en-US")} | ${v8ms} | ${re2ms} ms |`)
  }
}

const ordinary = async () => {
  const lines = Array.from(
    { length: 200_000 },
    (_, i) => `[${i}/200000] CC obj/module_${i % 997}/file_${i}.o  ${((i * 2654435761) % 4294967296).toString(16)}`
  )
  console.log("\nOrdinary patterns over 200,000 lines (one test per line, as `output {pattern}` does):\n")
  console.log(header)
  for (const [pattern, flags] of [
    ["error", ""],
    ["module_5\\d+/file", ""],
    ["(?i)ERROR|warn", "i"]
  ] as const) {
    const re2 = model(pattern)
    const v8 = new RegExp(pattern.replace("(?i)", ""), flags)
    const base = await time(`V8 RegExp /${pattern}/`, 5, () => lines.filter((l) => v8.test(l)).length)
    const linear = await time(`RE2JS /${pattern}/`, 5, () => lines.filter((l) => re2.test(l)).length)
    console.log(row(base))
    console.log(row(linear, base))
  }
}

if (import.meta.main) {
  await hostile()
  await ordinary()
}
