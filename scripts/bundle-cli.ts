/**
 * After tsc: the CLI as a bundle in dist/cli/, which is what an installed `freecode-tools` runs
 * (entry/cli.js). Loading ~550 separate modules (effect's index alone is ~250) cost more than
 * everything the CLI then does before an MCP server's first tools/list; one bundle, with what
 * only some commands need in chunks loaded on demand, is what the figures in docs/benchmarks.md
 * ("Start-up") measure. The library entries stay unbundled (dist/src/), so an embedder shares
 * one copy of effect with its own code.
 *
 * Left out of the bundle and loaded from node_modules when first used: packages that find files
 * beside their own module (web-tree-sitter's .wasm, ripgrep's binary), and the ones only a call
 * loads (src/load/lazy.ts), which a bundle would not make start any faster. (ajv is bundled: the
 * MCP SDK's server uses it from the start.)
 */
import { rmSync } from "node:fs"
import { build } from "rolldown"

const OUT = "dist/cli"
const LOADED_BY_CALLS = [
  "web-tree-sitter",
  "@vscode/ripgrep",
  "undici",
  "vscode-languageserver-protocol",
  "gpt-tokenizer",
  "yaml",
  "@mdream/js"
]
const external = (id: string) => id.startsWith("node:") || LOADED_BY_CALLS.some((p) => id === p || id.startsWith(`${p}/`))

rmSync(OUT, { recursive: true, force: true })
await build({
  input: { main: "dist/src/cli/main.js" },
  platform: "node",
  external,
  logLevel: "warn",
  output: { dir: OUT, format: "esm", sourcemap: false, minify: { compress: true, mangle: false }, entryFileNames: "[name].js", chunkFileNames: "[name]-[hash].js" }
})
