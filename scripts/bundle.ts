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
import { rmSync } from "node:fs"
import { build, type OutputOptions } from "rolldown"

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
await build({
  input: { main: "dist/src/cli/main.js" },
  platform: "node",
  external: (id) => id.startsWith("node:") || LOADED_BY_CALLS.some((p) => id === p || id.startsWith(`${p}/`)),
  logLevel: "warn",
  output: output("dist/cli")
})
