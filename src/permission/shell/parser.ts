/** The bash grammar (web-tree-sitter + tree-sitter-bash), loaded once per process. */
import { existsSync } from "node:fs"
import { createRequire } from "node:module"
import { fileURLToPath } from "node:url"
import { Effect } from "effect"
import { Language, Parser } from "web-tree-sitter"
import type { ShellParser } from "./analysis.ts"

let parser: Promise<ShellParser> | undefined

/**
 * The built package ships the one .wasm it uses beside `permission/shell.js` (copied by
 * `npm run build`), so installing it needs neither tree-sitter-bash's 20 MB nor its native build;
 * a clone reads it from the tree-sitter-bash devDependency.
 */
const grammarPath = (): string => {
  const shipped = fileURLToPath(new URL("../tree-sitter-bash.wasm", import.meta.url))
  return existsSync(shipped)
    ? shipped
    : createRequire(import.meta.url).resolve("tree-sitter-bash/tree-sitter-bash.wasm")
}

const loadParser = async (): Promise<ShellParser> => {
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
