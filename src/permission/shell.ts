/**
 * Shell commands, parsed with the real bash grammar (web-tree-sitter + tree-sitter-bash), never
 * with regexes or shell-quote: those read a newline as a space and miss `$(…)` inside quotes.
 * The parts live in `shell/`: the grammar (parser), what bash and the grammar read differently
 * (text), words after quote removal (words), builtins, what a command runs besides itself
 * (runs), harmless assignments (env), the walk (analyze, nodes), what bash cannot parse (syntax),
 * redirections, the line read both ways (line), what options launch (launches, launch-of), the
 * read-only list (read-only, read-only-table, scripts) and git naming a secret (git-secrets).
 */
import { Effect } from "effect"
import type { ShellAnalysis } from "./shell/analysis.ts"
import { analyzeWith } from "./shell/line.ts"
import { bashParser } from "./shell/parser.ts"

export type { ShellAnalysis, ShellParser, SimpleCommand } from "./shell/analysis.ts"
export { gitSecretRead } from "./shell/git-secrets.ts"
export { analyzeWith } from "./shell/line.ts"
export { bashParser } from "./shell/parser.ts"
export { READ_ONLY, readOnlyConcern } from "./shell/read-only.ts"
export { ruleWords } from "./shell/rule-words.ts"

/** Parses and analyzes a command. */
export const analyzeCommand = (command: string): Effect.Effect<ShellAnalysis> =>
  Effect.map(bashParser, (p) => analyzeWith(p, command))
