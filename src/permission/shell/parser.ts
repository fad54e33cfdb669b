/** The bash grammar (web-tree-sitter + tree-sitter-bash), loaded once per process. */
import { createRequire } from "node:module"
import { Effect } from "effect"
import { Language, Parser } from "web-tree-sitter"

let parser: Promise<Parser> | undefined

const loadParser = async (): Promise<Parser> => {
  const require = createRequire(import.meta.url)
  await Parser.init()
  const language = await Language.load(require.resolve("tree-sitter-bash/tree-sitter-bash.wasm"))
  const p = new Parser()
  p.setLanguage(language)
  return p
}

/** The parser, loaded on first use. */
export const bashParser: Effect.Effect<Parser> = Effect.promise(() => {
  parser ??= loadParser()
  return parser
})
