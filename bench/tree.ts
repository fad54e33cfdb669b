/**
 * A synthetic source tree for the search benchmarks: 25,000 files in 250 folders, with a
 * .gitignore'd build folder beside them. Deterministic, so every run searches the same bytes.
 */
import { existsSync, mkdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"

export const FILES = 25_000
const DIRS = 250

const words = ["user", "order", "cache", "request", "session", "config", "token", "stream", "event", "queue"]

const fileText = (seed: number) => {
  const lines: Array<string> = [`// module ${seed}`, `import { helper } from "../lib/helper"`, ""]
  for (let i = 0; i < 30; i++) {
    const w = words[(seed * 7 + i * 3) % words.length]!
    const v = words[(seed + i) % words.length]!
    lines.push(
      i % 10 === 0
        ? `export function handle${w[0]!.toUpperCase()}${w.slice(1)}Request(${v}: string) {`
        : `  const ${w}${i} = helper(${v}, ${seed % 97}) // ${w} ${v}`
    )
  }
  lines.push("}")
  return lines.join("\n")
}

export const ensureTree = (root: string): string => {
  const marker = join(root, ".complete")
  if (existsSync(marker)) return root
  mkdirSync(root, { recursive: true })
  writeFileSync(join(root, ".gitignore"), "build/\n*.log\n")
  for (let d = 0; d < DIRS; d++) {
    const dir = join(root, "src", `pkg${String(d).padStart(3, "0")}`)
    mkdirSync(dir, { recursive: true })
    for (let f = 0; f < FILES / DIRS; f++) {
      const seed = d * 1000 + f
      const ext = f % 3 === 0 ? "ts" : f % 3 === 1 ? "js" : "md"
      writeFileSync(join(dir, `file${f}.${ext}`), fileText(seed))
    }
  }
  mkdirSync(join(root, "build"), { recursive: true })
  for (let f = 0; f < 500; f++) writeFileSync(join(root, "build", `out${f}.js`), fileText(f))
  writeFileSync(marker, "")
  return root
}
