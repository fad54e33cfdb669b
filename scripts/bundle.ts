/**
 * After tsc: what the package runs is bundled from dist/src/ and dist/layers/ (docs/benchmarks.md,
 * "Start-up", has the figures). Loading ~500 separate modules cost more than everything an MCP
 * server then does before its first tools/list, and made importing the library twice as slow as
 * importing effect.
 *
 * - dist/lib/: the library entries (index, layers, mcp), with the chunks they share, so every
 *   entry sees the same classes. Packages stay imports (effect above all): an embedder's code and
 *   ours share one copy of each.
 * - dist/cli/: the `freecode-tools` executable, packages included and tree-shaken (effect's index
 *   alone is ~250 modules). Left out and loaded from node_modules on first use: packages that find
 *   files beside their own module (web-tree-sitter's .wasm, ripgrep's binary) and the ones only a
 *   call loads (src/load/lazy.ts), which bundling would not make start faster.
 *
 * Minified without renaming (whitespace and dead code only), so a stack trace still names
 * functions; no source maps are shipped (the unbundled dist/src/ and dist/layers/ are not either).
 */
import { rmSync, writeFileSync } from "node:fs"
import { build, type OutputChunk, type OutputOptions } from "rolldown"

const LOADED_BY_CALLS = [
  "web-tree-sitter",
  "@vscode/ripgrep",
  "undici",
  "vscode-languageserver-protocol",
  "gpt-tokenizer",
  "yaml",
  "@mdream/js"
]
const isPackage = (id: string) => !id.startsWith(".") && !id.startsWith("/")
const output = (dir: string): OutputOptions => ({
  dir,
  format: "esm",
  sourcemap: false,
  minify: { compress: true, mangle: false },
  entryFileNames: "[name].js",
  chunkFileNames: "[name]-[hash].js"
})

for (const dir of ["dist/lib", "dist/cli"]) rmSync(dir, { recursive: true, force: true })
await build({
  input: { index: "dist/src/index.js", layers: "dist/layers/live.js", mcp: "dist/src/mcp/serving.js" },
  platform: "node",
  external: isPackage,
  logLevel: "warn",
  // serving.js exports the 2025-era server, which the CLI's stdio serving loads only for a 2025
  // client: in the library entry that dynamic import is rightly a static one.
  onLog: (level, log, report) => {
    if (log.code !== "INEFFECTIVE_DYNAMIC_IMPORT") report(level, log)
  },
  output: output("dist/lib")
})
const cli = await build({
  input: { main: "dist/src/cli/main.js" },
  platform: "node",
  external: (id) => id.startsWith("node:") || LOADED_BY_CALLS.some((p) => id === p || id.startsWith(`${p}/`)),
  logLevel: "warn",
  output: output("dist/cli")
})

/**
 * The Node built-ins main.js loads through its static imports (and its chunks'), for
 * entry/bundle-start.js to load before it turns V8's lazy compiling off: loaded after, Node's own
 * code cache of each (made with the default flags) would be refused and each compiled anew.
 */
const chunks = new Map(
  cli.output.filter((o): o is OutputChunk => o.type === "chunk").map((c) => [c.fileName, c] as const)
)
const builtins = new Set<string>()
const seen = new Set<string>()
const visit = (name: string) => {
  const chunk = chunks.get(name)
  if (chunk === undefined || seen.has(name)) return
  seen.add(name)
  for (const id of chunk.imports) {
    if (id.startsWith("node:")) builtins.add(id)
    else visit(id)
  }
}
visit("main.js")
writeFileSync(
  "dist/cli/builtins.js",
  `// Written by scripts/bundle.ts: the built-ins dist/cli/main.js imports statically.\nexport const builtins = ${JSON.stringify([...builtins].sort())}\n`
)
