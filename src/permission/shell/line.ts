/**
 * The analysis of one command line: read by the grammar as written, and again as bash reads it
 * when the two can differ (backslash-newline), so only what both readings allow is allowed.
 */
import type { Parser } from "web-tree-sitter"
import type { ShellAnalysis, ShellParser } from "./analysis.ts"
import { Analyzer } from "./analyze.ts"
import { joinContinuations } from "./text.ts"
import { unwrap } from "./unwrap.ts"

const read = (parser: Parser, command: string): ShellAnalysis => {
  const analyzer = new Analyzer(parser)
  try {
    analyzer.read(command)
  } catch {
    analyzer.concern("the command could not be analyzed")
    return { ...analyzer.result(), opaque: [...analyzer.opaque, "the command could not be analyzed"] }
  }
  if (command.trim() === "") analyzer.concern("the command is empty")
  return analyzer.result()
}

const union = <A>(a: ReadonlyArray<A>, b: ReadonlyArray<A>) => [...new Set([...a, ...b])]

/** The analysis with an already loaded parser (synchronous). */
export const analyzeWith = (shellParser: ShellParser, command: string): ShellAnalysis => {
  const parser = unwrap(shellParser)
  const asWritten = read(parser, command)
  const joined = joinContinuations(command)
  if (joined === undefined) return asWritten
  // bash drops `\<newline>` before reading tokens: only a line both readings allow is allowed.
  const asBash = read(parser, joined)
  const same =
    JSON.stringify(asWritten.commands.map((c) => c.words)) === JSON.stringify(asBash.commands.map((c) => c.words))
  const concerns = union(asWritten.concerns, asBash.concerns)
  if (!same) concerns.push("a line continuation (backslash-newline) makes bash read it differently from how it looks")
  return {
    commands: asWritten.commands,
    candidates: [...asWritten.candidates, ...asBash.candidates],
    concerns,
    opaque: union(asWritten.opaque, asBash.opaque),
    inputs: [...asWritten.inputs, ...asBash.inputs]
  }
}
