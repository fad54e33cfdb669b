/**
 * Shell commands, parsed with the real bash grammar (web-tree-sitter + tree-sitter-bash), never
 * with regexes or shell-quote: those read a newline as a space and miss `$(…)` inside quotes.
 *
 * `analyzeShell` splits a command into its simple commands (across `;` `&&` `||` `|` `&`,
 * newlines, subshells and groups) and lists every construct that makes a prefix rule unable to
 * vouch for it ("concerns"): command or process substitution anywhere (quotes and heredocs
 * included), redirections that write a file, `eval`/`exec`/`source`, `bash -c`, `xargs`,
 * `find -exec`, wrappers that run another command, assignments that change how a command runs,
 * and any construct this analysis does not model. A parse error is a concern too (fail closed).
 */
import { existsSync } from "node:fs"
import { createRequire } from "node:module"
import { fileURLToPath } from "node:url"
import { Effect } from "effect"
import { Language, type Node, Parser } from "web-tree-sitter"

/** One simple command: its argv as bash would see it (quotes removed), after harmless wrappers. */
export interface SimpleCommand {
  readonly words: ReadonlyArray<string>
  /** Whether any word holds a variable expansion (its text is kept as written). */
  readonly dynamic: boolean
}

export interface ShellAnalysis {
  /** Top-level simple commands, in order: what an allow rule must cover, every one of them. */
  readonly commands: ReadonlyArray<SimpleCommand>
  /**
   * Every command that might run, nested ones included (inside `$(…)`, `bash -c '…'`, after
   * `sudo`/`xargs`/`find -exec`): what a deny rule is matched against.
   */
  readonly candidates: ReadonlyArray<SimpleCommand>
  /** Why no prefix rule may allow this command; empty when every part is a plain simple command. */
  readonly concerns: ReadonlyArray<string>
}

/**
 * The loaded bash parser, opaque outside this file: the package's declarations then do not name
 * web-tree-sitter's types, which need emscripten's globals and fail a consumer's type check.
 */
export interface ShellParser {
  readonly _tag: "ShellParser"
}
const unwrap = (parser: ShellParser): Parser => parser as unknown as Parser

let parser: Promise<ShellParser> | undefined

/**
 * The bash grammar: the built package ships the one .wasm it uses beside this module (copied by
 * `npm run build`), so installing it needs neither tree-sitter-bash's 20 MB nor its native build;
 * a clone reads it from the tree-sitter-bash devDependency.
 */
const grammarPath = (): string => {
  const shipped = fileURLToPath(new URL("./tree-sitter-bash.wasm", import.meta.url))
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

/** The parser, loaded once per process. */
export const bashParser: Effect.Effect<ShellParser> = Effect.promise(() => {
  parser ??= loadParser()
  return parser
})

/** Parses and analyzes a command. */
export const analyzeCommand = (command: string): Effect.Effect<ShellAnalysis> =>
  Effect.map(bashParser, (p) => analyzeWith(p, command))

/** Assignments that only change output or locale, never which program runs or what it loads. */
const HARMLESS_ENV = new Set([
  "CI",
  "NODE_ENV",
  "DEBUG",
  "FORCE_COLOR",
  "NO_COLOR",
  "TERM",
  "TZ",
  "LANG",
  "LANGUAGE",
  "COLUMNS",
  "LINES",
  "RUST_BACKTRACE",
  "RUST_LOG",
  "PYTHONUNBUFFERED",
  "PYTHONDONTWRITEBYTECODE",
  "VERBOSE",
  "NODE_NO_WARNINGS"
])
const isHarmlessEnv = (name: string) => HARMLESS_ENV.has(name) || name.startsWith("LC_")

/** Builtins and programs that run code they are given as text. */
const RUNS_TEXT = new Set(["eval", "exec", "source", ".", "trap", "alias"])
const SHELLS = new Set(["sh", "bash", "zsh", "dash", "ksh", "mksh", "fish", "busybox", "ash"])
/** Programs whose arguments are another command. */
const WRAPPERS = new Set([
  "xargs",
  "env",
  "sudo",
  "doas",
  "su",
  "command",
  "builtin",
  "parallel",
  "watch",
  "setsid",
  "chroot",
  "nsenter",
  "unshare",
  "runuser",
  "ionice",
  "chrt",
  "taskset",
  "stdbuf",
  "flock",
  "script",
  "strace",
  "ltrace",
  "gdb"
])
const FIND_EXEC = new Set(["-exec", "-execdir", "-ok", "-okdir"])
const FIND_WRITES = new Set(["-delete", "-fprint", "-fprint0", "-fprintf", "-fls"])

const basename = (word: string) => word.slice(word.lastIndexOf("/") + 1)

interface Word {
  readonly value: string
  readonly dynamic: boolean
}

class Analyzer {
  readonly commands: Array<SimpleCommand> = []
  readonly candidates: Array<SimpleCommand> = []
  readonly concerns: Array<string> = []
  private depth = 0
  /** Inside a construct already reported as unchecked: its parts are not reported again. */
  private unknown = 0
  private readonly parser: Parser

  constructor(parser: Parser) {
    this.parser = parser
  }

  concern(text: string) {
    if (!this.concerns.includes(text)) this.concerns.push(text)
  }

  /** Commands nested in substitutions or strings are only candidates for deny rules. */
  private nested<A>(f: () => A): A {
    this.depth++
    try {
      return f()
    } finally {
      this.depth--
    }
  }

  visit(node: Node): void {
    if (node.isMissing || node.type === "ERROR") {
      this.concern("the command does not parse as bash")
      return
    }
    if (!node.isNamed) return
    switch (node.type) {
      case "program":
      case "list":
      case "pipeline":
      case "subshell":
      case "compound_statement":
      case "redirected_statement":
      case "negated_command":
      case "heredoc_body":
      case "herestring_redirect":
        for (const c of node.children) this.visit(c)
        return
      case "heredoc_redirect":
        this.heredoc(node)
        for (const c of node.children) this.visit(c)
        return
      case "comment":
      case "heredoc_start":
      case "heredoc_end":
      case "heredoc_content":
        return
      case "command":
        this.command(node)
        return
      case "file_redirect":
        this.redirect(node)
        return
      case "variable_assignment":
      case "variable_assignments":
        this.concern(`it sets a shell variable (${node.text.split("=")[0]})`)
        for (const c of node.children) this.visitWordParts(c)
        return
      case "command_substitution":
        this.concern("it contains a command substitution ($(…) or backticks)")
        this.nested(() => this.visitAll(node))
        return
      case "process_substitution":
        this.concern("it contains a process substitution (<(…) or >(…))")
        this.nested(() => this.visitAll(node))
        return
      default:
        if (isWordType(node.type)) {
          this.visitWordParts(node)
          return
        }
        if (this.unknown === 0) this.concern(`it uses a shell construct that is not checked here (${node.type})`)
        this.unknown++
        try {
          this.nested(() => this.visitAll(node))
        } finally {
          this.unknown--
        }
    }
  }

  private visitAll(node: Node): void {
    for (const c of node.children) this.visit(c)
  }

  /** Walks a word for the constructs inside it that matter (substitutions, complex expansions). */
  private visitWordParts(node: Node): void {
    switch (node.type) {
      case "command_substitution":
      case "process_substitution":
        this.visit(node)
        return
      case "expansion":
        if (!isPlainExpansion(node)) this.concern(`it uses a parameter expansion with an operator (${node.text})`)
        break
      case "arithmetic_expansion":
        this.concern(`it uses arithmetic expansion (${node.text})`)
        break
      case "brace_expression":
      case "extglob_pattern":
        break
      default:
        if (node.isNamed && !isWordType(node.type) && node.type !== "variable_name") {
          this.visit(node)
          return
        }
    }
    for (const c of node.children) this.visitWordParts(c)
  }

  /**
   * The grammar leaves backticks (and everything in a `<<-` body) unparsed inside a heredoc, so
   * an unquoted heredoc's text is checked directly: any backtick, `$(` or `${…}` with an
   * operator there is a substitution bash will run.
   */
  private heredoc(node: Node): void {
    const start = node.children.find((c) => c.type === "heredoc_start")?.text ?? ""
    if (/['"\\]/.test(start)) return
    const body = node.children.find((c) => c.type === "heredoc_body")?.text ?? ""
    if (/`|\$\(|\$\{(?![A-Za-z_][A-Za-z0-9_]*\})/.test(body)) {
      this.concern("it contains a command substitution ($(…) or backticks)")
    }
  }

  private redirect(node: Node): void {
    const operator = node.children.find((c) => !c.isNamed)?.type ?? ""
    const target =
      node.childForFieldName("destination") ?? node.namedChildren.filter((c) => c.type !== "file_descriptor").at(-1)
    for (const c of node.namedChildren) if (c.type !== "file_descriptor") this.visitWordParts(c)
    if (operator === "<") return
    if (operator === ">&" || operator === "<&" || operator === ">&-" || operator === "<&-") {
      if (target === undefined || target === null || operator.endsWith("-") || /^(\d+|-)$/.test(target.text)) return
    }
    if (target !== undefined && target !== null && wordOf(target).value === "/dev/null" && operator !== "<>") return
    this.concern(`it redirects output into a file (${node.text.trim()})`)
  }

  private command(node: Node): void {
    const words: Array<Word> = []
    let named = false
    for (const child of node.namedChildren) {
      if (child.type === "variable_assignment") {
        const name = child.childForFieldName("name")?.text ?? child.text.split("=")[0] ?? ""
        if (!isHarmlessEnv(name)) this.concern(`it sets ${name}, which can change how a command runs`)
        for (const c of child.children) this.visitWordParts(c)
        continue
      }
      if (child.type === "file_redirect" || child.type === "herestring_redirect") {
        this.visit(child)
        continue
      }
      if (child.type === "command_name") {
        named = true
        const inner = child.namedChildren[0]
        if (inner === undefined) continue
        this.visitWordParts(inner)
        const word = wordOf(inner)
        if (word.dynamic || /[*?[]/.test(word.value)) {
          this.concern(`the program to run is not a plain name (${inner.text})`)
        }
        words.push(word)
        continue
      }
      this.visitWordParts(child)
      words.push(wordOf(child))
    }
    if (!named || words.length === 0) {
      if (node.namedChildren.some((c) => c.type === "variable_assignment")) this.concern("it sets shell variables")
      return
    }
    this.simple(words)
  }

  /** Records a simple command after peeling harmless wrappers, and flags commands that run commands. */
  private simple(all: ReadonlyArray<Word>): void {
    const words = stripWrappers(all)
    const command: SimpleCommand = { words: words.map((w) => w.value), dynamic: words.some((w) => w.dynamic) }
    if (this.depth === 0) this.commands.push(command)
    this.candidates.push(command)
    if (words.length === 0) return
    const name = basename(words[0]!.value)
    const args = words.slice(1).map((w) => w.value)
    if (RUNS_TEXT.has(name)) {
      this.concern(`it runs text as a command (${name})`)
      this.candidatesFromText(args.join(" "))
    } else if (SHELLS.has(name) && args.some((a) => /^-[a-z]*c[a-z]*$/i.test(a))) {
      this.concern(`it runs a command string in a new shell (${name} -c)`)
      const at = args.findIndex((a) => /^-[a-z]*c[a-z]*$/i.test(a))
      const script = args[at + 1]
      if (script !== undefined) this.candidatesFromText(script)
    } else if (WRAPPERS.has(name)) {
      this.concern(`it runs another command through ${name}`)
      for (let i = 1; i < words.length; i++)
        this.candidates.push({ words: args.slice(i - 1), dynamic: command.dynamic })
    } else if (name === "find") {
      const exec = args.findIndex((a) => FIND_EXEC.has(a))
      if (exec >= 0) {
        this.concern(`it runs a command for every file found (find ${args[exec]})`)
        this.candidates.push({ words: args.slice(exec + 1), dynamic: command.dynamic })
      }
      const writes = args.find((a) => FIND_WRITES.has(a))
      if (writes !== undefined) this.concern(`it deletes or writes files (find ${writes})`)
    }
  }

  /** A command given as text (`bash -c '…'`, `eval '…'`): parsed too, so deny rules see inside. */
  private candidatesFromText(text: string): void {
    if (this.depth > 8) return
    const tree = this.parser.parse(text)
    if (tree === null) return
    try {
      this.nested(() => this.visit(tree.rootNode))
    } finally {
      tree.delete()
    }
  }
}

const WORD_TYPES = new Set([
  "word",
  "string",
  "raw_string",
  "ansi_c_string",
  "translated_string",
  "string_content",
  "number",
  "concatenation",
  "simple_expansion",
  "expansion",
  "special_variable_name",
  "brace_expression",
  "arithmetic_expansion"
])
const isWordType = (type: string) => WORD_TYPES.has(type)

/** `${NAME}` and nothing more: no defaults, substitutions or assignments inside. */
const isPlainExpansion = (node: Node) =>
  node.namedChildren.length === 1 &&
  (node.namedChildren[0]!.type === "variable_name" || node.namedChildren[0]!.type === "special_variable_name")

const unescapeUnquoted = (text: string) => text.replace(/\\\n/g, "").replace(/\\(.)/gs, "$1")
const unescapeDouble = (text: string) => text.replace(/\\\n/g, "").replace(/\\([$`"\\])/g, "$1")

/** A word's value as the program receives it; expansions are kept as written and mark it dynamic. */
const wordOf = (node: Node): Word => {
  switch (node.type) {
    case "word":
      return { value: unescapeUnquoted(node.text), dynamic: false }
    case "number":
      return { value: node.text, dynamic: false }
    case "raw_string":
      return { value: node.text.slice(1, -1), dynamic: false }
    case "string": {
      // string_content nodes leave out the text between children; rebuild from offsets.
      const inner = node.text.slice(1, -1)
      const dynamic = node.namedChildren.some((c) => c.type !== "string_content")
      return { value: unescapeDouble(inner), dynamic }
    }
    case "concatenation": {
      const parts = node.namedChildren.map(wordOf)
      return { value: parts.map((p) => p.value).join(""), dynamic: parts.some((p) => p.dynamic) }
    }
    default:
      return { value: node.text, dynamic: true }
  }
}

/** Options of `timeout` that take a value. */
const TIMEOUT_VALUE_OPTIONS = new Set(["-s", "--signal", "-k", "--kill-after"])

/**
 * Peels wrappers that only change how long or how nicely a command runs (`time`, `nohup`,
 * `nice`, `timeout`), so `timeout 60 npm test` is checked as `npm test`.
 */
const stripWrappers = (words: ReadonlyArray<Word>): ReadonlyArray<Word> => {
  let rest = words
  for (let guard = 0; guard < 8 && rest.length > 1; guard++) {
    const name = rest[0]!.value
    let i = 1
    if (name === "time") {
      while (i < rest.length && rest[i]!.value === "-p") i++
    } else if (name === "nohup") {
      // nothing to skip
    } else if (name === "nice") {
      while (i < rest.length && rest[i]!.value.startsWith("-")) i += rest[i]!.value === "-n" ? 2 : 1
    } else if (name === "timeout") {
      while (i < rest.length && rest[i]!.value.startsWith("-")) i += TIMEOUT_VALUE_OPTIONS.has(rest[i]!.value) ? 2 : 1
      i++ // the duration
    } else break
    if (i >= rest.length) break
    rest = rest.slice(i)
  }
  return rest
}

/** The analysis with an already loaded parser (synchronous). */
export const analyzeWith = (shellParser: ShellParser, command: string): ShellAnalysis => {
  const parser = unwrap(shellParser)
  const analyzer = new Analyzer(parser)
  const failed = { commands: [], candidates: [], concerns: ["the command could not be parsed"] }
  let tree: ReturnType<Parser["parse"]>
  try {
    tree = parser.parse(command)
  } catch {
    return failed
  }
  if (tree === null) return failed
  try {
    if (tree.rootNode.hasError) analyzer.concern("the command does not parse as bash")
    analyzer.visit(tree.rootNode)
  } catch {
    analyzer.concern("the command could not be analyzed")
  } finally {
    tree.delete()
  }
  if (command.trim() === "") analyzer.concern("the command is empty")
  return { commands: analyzer.commands, candidates: analyzer.candidates, concerns: analyzer.concerns }
}

/** Splits a rule's command text into words with the same grammar (quotes removed). */
export const ruleWords = (shellParser: ShellParser, text: string): ReadonlyArray<string> | undefined => {
  const analysis = analyzeWith(shellParser, text)
  if (analysis.concerns.length > 0 || analysis.commands.length !== 1) return undefined
  return analysis.commands[0]!.words
}
