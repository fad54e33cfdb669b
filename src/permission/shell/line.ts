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
    const why = "the command could not be analyzed"
    return { ...analyzer.result(), opaque: [...analyzer.opaque, why], refusals: [...analyzer.refusals, why] }
  }
  if (command.trim() === "") analyzer.concern("the command is empty")
  return analyzer.result()
}

const isNetworkRefusal = (why: string) => /network/.test(why)

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
  const unparseable = [asWritten, asBash].every((a) => a.refusals.some((r) => !isNetworkRefusal(r)))
  if (!same) concerns.push("a line continuation (backslash-newline) makes bash read it differently from how it looks")
  return {
    commands: asWritten.commands,
    candidates: [...asWritten.candidates, ...asBash.candidates],
    concerns,
    opaque: union(asWritten.opaque, asBash.opaque),
    // A line is unparseable only if neither reading parses; a connection in either is refused.
    refusals: union(asWritten.refusals, asBash.refusals).filter((r) => isNetworkRefusal(r) || unparseable),
    inputs: [...asWritten.inputs, ...asBash.inputs]
  }
}
