/** The bash grammar (web-tree-sitter + tree-sitter-bash), loaded once per process. */
import { existsSync } from "node:fs"
import { createRequire } from "node:module"
import { join } from "node:path"
import { Effect } from "effect"
import { lazyImport } from "../../load/lazy.ts"
import { packageRoot } from "../../load/package-root.ts"
import type { ShellParser } from "./analysis.ts"

// web-tree-sitter and the grammar load on the first shell analysis, not with the package.
const treeSitter = lazyImport(() => import("web-tree-sitter"))

let parser: Promise<ShellParser> | undefined

/**
 * The built package ships the one .wasm it uses in dist/src/permission/ (copied by `npm run build`),
 * so installing it needs neither tree-sitter-bash's 20 MB nor its native build; a clone that has
 * not been built reads it from the tree-sitter-bash devDependency. Found from the package's root,
 * so this module may run from src/, dist/src/ or the CLI bundle alike.
 */
const grammarPath = (): string => {
  const root = packageRoot(import.meta.dirname)
  const shipped = root === undefined ? undefined : join(root.dir, "dist/src/permission/tree-sitter-bash.wasm")
  return shipped !== undefined && existsSync(shipped)
    ? shipped
    : createRequire(import.meta.url).resolve("tree-sitter-bash/tree-sitter-bash.wasm")
}

/**
 * The grammar's lexer is one 160 KB wasm function; once it is hot, V8's optimizing tier
 * recompiles it in a compile zone of ~700 MB, much of which the process keeps. With tier-up off
 * (both flags: dynamic tiering alone still tiers up) V8 keeps the baseline code, and a parse costs
 * about the same. Set before the grammar is compiled, so it holds for this process's wasm from
 * here on — the price of embedding the layer, said in docs/bash.md.
 */
const baselineWasmOnly = () => {
  // node:v8 taken here, not imported: every start of the CLI loads this module, few parse bash.
  const v8 = process.getBuiltinModule("node:v8")
  v8.setFlagsFromString("--no-wasm-tier-up")
  v8.setFlagsFromString("--no-wasm-dynamic-tiering")
}

const loadParser = async (): Promise<ShellParser> => {
  const { Language, Parser } = await treeSitter()
  baselineWasmOnly()
  await Parser.init()
  const language = await Language.load(grammarPath())
  const p = new Parser()
  p.setLanguage(language)
  return p as unknown as ShellParser
}

/** The parser, loaded on first use. */
export const bashParser: Effect.Effect<ShellParser> = Effect.promise(() => {
  parser ??= loadParser()
  return parser
})
