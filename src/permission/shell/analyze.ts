/**
 * The analysis of one command line against the real bash grammar. It is an allow-list: every
 * node type, word part, redirection and builtin is either one this file proves inert or a
 * "concern" (no prefix rule may allow the line). What a deny rule must see is collected on the
 * side: every command the line can run ("candidates"), nested ones included, and "opaque"
 * reasons where what runs cannot be known from the line (a deny rule then refuses).
 */
import type { Node, Parser } from "web-tree-sitter"
import { type Shape, type ShellAnalysis, type SimpleCommand, toSimple, type Word } from "./analysis.ts"
import { BUILTINS, builtinConcern, EVALUATES_SUBSCRIPTS, holdsSubscriptCode } from "./builtins.ts"
import { isHarmlessEnv } from "./env.ts"
import { launchOf } from "./launch-of.ts"
import { CONTAINERS, SUBSTITUTIONS, WORDS } from "./nodes.ts"
import { parseLine } from "./read-write.ts"
import { judgeRedirect } from "./redirects.ts"
import { runsOf, stripWrappers } from "./runs.ts"
import { syntaxError } from "./syntax.ts"
import { joinContinuations, unsureCharacter, unsureComment, unsureEscape } from "./text.ts"
import { evalWord, PLAIN_EXPANSION, PLAIN_SIMPLE_EXPANSION } from "./words.ts"

const isRedirect = (node: Node) => node.type.endsWith("redirect")

const MAX_DEPTH = 8
const MAX_CANDIDATES = 400

export class Analyzer {
  readonly commands: Array<SimpleCommand> = []
  readonly candidates: Array<SimpleCommand> = []
  readonly concerns: Array<string> = []
  readonly opaque: Array<string> = []
  readonly refusals: Array<string> = []
  readonly inputs: Array<{ value: string; shape: Shape }> = []
  private readonly seen = new Set<string>()
  private depth = 0
  /** Inside a construct already reported as not modelled: its parts are not reported again. */
  private unknown = 0
  private readonly parser: Parser
  /** Where the tree being read has bash's `<>` (read-write.ts). */
  private readWrite: ReadonlySet<number> = new Set()

  constructor(parser: Parser) {
    this.parser = parser
  }

  concern(text: string) {
    if (!this.concerns.includes(text)) this.concerns.push(text)
  }

  private hidden(text: string) {
    if (!this.opaque.includes(text)) this.opaque.push(text)
  }

  /** Commands nested in substitutions, strings or unknown constructs are only candidates for deny rules. */
  private nested(f: () => void): void {
    this.depth++
    try {
      f()
    } finally {
      this.depth--
    }
  }

  /** Reads a whole text (the line, or a command string a shell will run). */
  read(text: string): void {
    const unsure = unsureCharacter(text)
    if (unsure !== undefined)
      this.unsure(`it contains a character (${unsure}) that bash reads differently from this check`)
    if (unsureComment(text))
      this.unsure("a comment ends in a backslash-newline, which bash and this check read differently")
    if (unsureEscape(text))
      this.unsure("it quotes a blank with a backslash where bash and this check split words differently")
    const parsed = parseLine(this.parser, text)
    if (parsed === null) {
      this.broken("the command could not be parsed")
      return
    }
    const { tree } = parsed
    const outer = this.readWrite
    this.readWrite = parsed.readWrite
    try {
      // bash runs no command of a line it cannot parse, but what it would run is not known either.
      const why = tree.rootNode.hasError ? "the command does not parse as bash" : syntaxError(tree.rootNode)
      if (why !== undefined) this.broken(why)
      this.visit(tree.rootNode)
    } finally {
      this.readWrite = outer
      tree.delete()
    }
  }

  /** bash may read this differently: no rule vouches for it, and a deny rule refuses. */
  private unsure(why: string) {
    this.concern(why)
    this.hidden(why)
  }

  /** A line bash cannot parse: refused, whatever the rules say (text inside it, `bash -c '…'`, asks). */
  private broken(why: string) {
    this.unsure(why)
    if (this.depth === 0 && !this.refusals.includes(why)) this.refusals.push(why)
  }

  private visit(node: Node): void {
    if (node.isMissing || node.type === "ERROR") {
      this.broken("the command does not parse as bash")
      for (const c of node.namedChildren) this.visit(c)
      return
    }
    if (!node.isNamed || node.type === "comment") return
    if (CONTAINERS.has(node.type)) {
      for (const c of node.namedChildren) this.visit(c)
      return
    }
    switch (node.type) {
      case "command":
        this.command(node)
        return
      case "file_redirect":
        this.redirect(node)
        return
      case "herestring_redirect":
        for (const c of node.namedChildren) this.word(c)
        return
      case "heredoc_redirect":
        this.heredoc(node)
        return
      case "test_command":
        // `[ … ]` is the test builtin with words; the grammar gives it a structure of its own.
        if (/^\[\s[\s\S]*\s\]$/.test(node.text)) {
          this.reread(`\\[${node.text.slice(1, -1)}\\]`)
          return
        }
        break
      case "variable_assignment":
      case "variable_assignments":
        this.concern(`it sets a shell variable (${node.text.split("=")[0]})`)
        if (!isHarmlessEnv(node.text.split(/\+?=/)[0]!))
          this.hidden(`it sets ${node.text.split(/\+?=/)[0]}, which can make a program run other code`)
        for (const c of node.type === "variable_assignment" ? [node] : node.namedChildren) this.assignment(c)
        return
    }
    if (WORDS.has(node.type)) {
      this.word(node)
      return
    }
    // Not modelled (if, for, while, case, functions, [[ ]], (( ))…): it asks, and what it
    // contains is still walked so deny rules see the commands inside.
    if (this.unknown === 0) this.concern(`it uses a shell construct that is not checked here (${node.type})`)
    if (/\[[^\]]*[$`]/.test(node.text)) this.hidden("it evaluates an array subscript, which can run commands")
    this.unknown++
    try {
      this.nested(() => {
        for (const c of node.namedChildren) this.visit(c)
      })
    } finally {
      this.unknown--
    }
  }

  /** Reads text in place of a node, at the same depth (the same command, written as the grammar reads it best). */
  private reread(text: string): void {
    const tree = this.parser.parse(text)
    if (tree === null || tree.rootNode.hasError) {
      this.broken("the command does not parse as bash")
      tree?.delete()
      return
    }
    try {
      this.visit(tree.rootNode)
    } finally {
      tree.delete()
    }
  }

  /** A word's value; every part that is not plain text is judged here. */
  private word(node: Node): Word {
    const w = evalWord(node, (part) => this.part(part))
    if (w.shape === "literal" && holdsSubscriptCode(w.value) && /\[[^\]]*(\$[({]|`)/.test(w.value))
      this.hidden(`it holds text that bash may evaluate as a subscript (${w.text})`)
    return w
  }

  private part(node: Node): void {
    switch (node.type) {
      case "command_substitution":
        this.concern("it contains a command substitution ($(…) or backticks)")
        this.nested(() => {
          for (const c of node.namedChildren) this.visit(c)
        })
        return
      case "process_substitution":
        this.concern("it contains a process substitution (<(…) or >(…))")
        this.nested(() => {
          for (const c of node.namedChildren) this.visit(c)
        })
        return
      case "simple_expansion":
        if (PLAIN_SIMPLE_EXPANSION.test(node.text)) return
        this.concern(`it uses a parameter expansion this check does not model (${node.text})`)
        this.hidden(`it uses a parameter expansion whose value is only known when it runs (${node.text})`)
        return
      case "expansion":
        if (PLAIN_EXPANSION.test(node.text)) return
        this.concern(`it uses a parameter expansion with an operator (${node.text})`)
        // Indirection, prompt expansion and subscripts evaluate text as code.
        if (/^\$\{[!#]|@[PEAKa]|\[/.test(node.text))
          this.hidden(`it uses a parameter expansion that can evaluate text as code (${node.text})`)
        break
      case "arithmetic_expansion":
        this.concern(`it uses arithmetic expansion (${node.text})`)
        if (/[A-Za-z_]/.test(node.text)) this.hidden(`arithmetic on variables can run commands (${node.text})`)
        break
      default:
        if (this.unknown === 0) this.concern(`it uses a shell construct that is not checked here (${node.type})`)
    }
    this.substitutionsIn(node)
  }

  /** The substitutions inside a part that is not modelled, so deny rules see what they run. */
  private substitutionsIn(node: Node): void {
    for (const c of node.namedChildren) {
      if (SUBSTITUTIONS.has(c.type)) this.part(c)
      else this.substitutionsIn(c)
    }
  }

  /** An unquoted heredoc's body is expanded; the grammar leaves backticks and `<<-` bodies unparsed. */
  private heredoc(node: Node): void {
    const start = node.children.find((c) => c.type === "heredoc_start")?.text ?? ""
    const quoted = /['"\\]/.test(start)
    for (const c of node.namedChildren) {
      if (c.type === "heredoc_start" || c.type === "heredoc_end") continue
      if (c.type === "heredoc_body") {
        if (quoted) continue
        if (/`|\$\(|\$\{(?![A-Za-z_][A-Za-z0-9_]*\})|\$\[/.test(c.text)) {
          this.concern("it contains a command substitution ($(…) or backticks)")
          if (!c.namedChildren.some((n) => SUBSTITUTIONS.has(n.type)))
            this.hidden("a heredoc holds a substitution this check cannot read")
        }
        for (const part of c.namedChildren) if (part.type !== "heredoc_content") this.part(part)
        continue
      }
      this.visit(c)
    }
  }

  private redirect(node: Node): void {
    const op = node.children.find((c) => !c.isNamed)
    const operator = op !== undefined && this.readWrite.has(op.startIndex) ? "<>" : (op?.type ?? "")
    const targets = node.namedChildren.filter((c) => c.type !== "file_descriptor")
    const words = targets.map((t) => this.word(t))
    const target = words.length === 1 ? words[0] : undefined
    const judged = judgeRedirect(operator, words)
    if (judged.refuse !== undefined) {
      this.concern(judged.refuse)
      if (!this.refusals.includes(judged.refuse)) this.refusals.push(judged.refuse)
    } else if (judged.unsure !== undefined) this.unsure(judged.unsure)
    else if (judged.concern !== undefined) this.concern(judged.concern)
    else if (operator === "<" && target !== undefined) this.inputs.push({ value: target.value, shape: target.shape })
  }

  private assignment(node: Node): string | undefined {
    const name = node.childForFieldName("name")
    const value = node.childForFieldName("value")
    if (value !== null) this.word(value)
    if (name === null || name.type !== "variable_name") {
      this.concern(`it assigns an array element (${name?.text ?? node.text})`)
      if (name !== null) this.substitutionsIn(name)
      if (name !== null && /\[[^\]]*[$`]/.test(name.text))
        this.hidden("it evaluates an array subscript, which can run commands")
      return undefined
    }
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name.text)) {
      // The grammar takes `--opt=x` for an assignment; to bash it is a word (here, the program).
      this.unsure(`bash reads ${node.text} as a word, not an assignment`)
      return undefined
    }
    const operator = node.text.slice(name.text.length, name.text.length + 2)
    return operator.startsWith("=") ? name.text : `${name.text}+`
  }

  private command(node: Node): void {
    const words: Array<Word> = []
    let named = false
    let previous: Node | undefined
    for (const child of node.namedChildren) {
      // bash splits words only at blanks and operators: two words touching are one to bash.
      if (
        previous !== undefined &&
        previous.endIndex === child.startIndex &&
        !isRedirect(previous) &&
        !isRedirect(child)
      ) {
        this.unsure(`bash reads ${previous.text}${child.text} as one word, unlike this check`)
      }
      previous = child
      if (child.type === "variable_assignment") {
        const name = this.assignment(child)
        if (name !== undefined && !isHarmlessEnv(name)) {
          this.concern(`it sets ${name}, which can change how a command runs`)
          this.hidden(`it sets ${name}, which can make a program run other code`)
        }
      } else if (
        child.type === "file_redirect" ||
        child.type === "herestring_redirect" ||
        child.type === "heredoc_redirect"
      ) {
        this.visit(child)
      } else if (child.type === "command_name") {
        named = true
        const inner = child.namedChildren[0]
        if (inner !== undefined) words.push(this.word(inner))
      } else words.push(this.word(child))
    }
    if (!named || words.length === 0) {
      this.concern("it sets shell variables")
      return
    }
    this.simple(words)
  }

  /** A simple command: the allow side checks it after harmless wrappers, the deny side as written. */
  private simple(all: ReadonlyArray<Word>): void {
    this.candidate(all)
    const words = stripWrappers(all)
    if (this.depth === 0) this.commands.push(toSimple(words))
    const head = words[0]!
    if (head.shape !== "literal") {
      this.concern(`the program to run is not a plain name (${head.text})`)
      return
    }
    const args = words.slice(1)
    const builtin = !head.value.includes("/") && BUILTINS.has(head.value)
    const why = builtin ? builtinConcern(head.value, args) : undefined
    if (why !== undefined) this.concern(why)
    const runs = runsOf(words)
    if (runs.concern !== undefined && (!builtin || why !== undefined)) this.concern(runs.concern)
    const launch = launchOf(words)
    if (launch !== undefined)
      this.concern(
        launch.runs !== undefined
          ? `it can run another program (${launch.runs}), which a rule for ${head.value} does not cover`
          : `it writes a file other than its output (${launch.writes})`
      )
  }

  /** Records a command a deny rule must see, and everything it runs in turn. */
  private candidate(words: ReadonlyArray<Word>): void {
    const head = words[0]
    if (head === undefined) return
    const key = JSON.stringify(words.map((w) => [w.value, w.shape]))
    if (this.seen.has(key)) return
    if (this.seen.size >= MAX_CANDIDATES) {
      this.hidden("it nests more commands than this check follows")
      return
    }
    this.seen.add(key)
    this.candidates.push(toSimple(words))
    if (head.shape !== "literal") {
      this.hidden(`the program to run is only known when it runs (${head.text})`)
      return
    }
    if (
      EVALUATES_SUBSCRIPTS.has(head.value) &&
      words.slice(1).some((a) => a.shape !== "literal" || holdsSubscriptCode(a.value))
    )
      this.hidden(`${head.value} may evaluate an array subscript, which can run commands`)
    const runs = runsOf(words)
    for (const o of runs.opaque) this.hidden(o)
    const launch = launchOf(words)
    if (launch?.runs !== undefined) this.hidden(`${launch.runs} runs code this check cannot read`)
    for (const c of runs.commands) this.candidate(c)
    for (const s of runs.scripts) this.script(s)
  }

  /** A command given as text (`bash -c '…'`, `eval '…'`): parsed both ways too, so deny rules see inside. */
  private script(text: string): void {
    if (this.depth >= MAX_DEPTH) {
      this.hidden("it nests command strings deeper than this check follows")
      return
    }
    this.nested(() => {
      this.read(text)
      const joined = joinContinuations(text)
      if (joined !== undefined) this.read(joined)
    })
  }

  result(): ShellAnalysis {
    const { commands, candidates, concerns, opaque, refusals, inputs } = this
    return { commands, candidates, concerns, opaque, refusals, inputs }
  }
}
