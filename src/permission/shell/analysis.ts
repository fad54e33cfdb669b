/** What the analysis of a command line says, as the permission engine reads it. */
/**
 * A word is `literal` when its value is exactly what the program receives, `pattern` when bash
 * may still expand it into other words (globs, braces, a leading `~`) without running anything,
 * and `dynamic` when its value comes from a variable or a substitution.
 */
export type Shape = "literal" | "pattern" | "dynamic"

export interface Word {
  readonly value: string
  readonly shape: Shape
  /** The word as written. */
  readonly text: string
}

/**
 * The loaded bash parser, opaque outside `src/permission/`: the package's declarations then do
 * not name web-tree-sitter's types, which need emscripten's globals and fail a consumer's type check.
 */
export interface ShellParser {
  readonly _tag: "ShellParser"
}

/** One simple command: its argv as bash would see it (quotes removed), after harmless wrappers. */
export interface SimpleCommand {
  readonly words: ReadonlyArray<string>
  /** Per word: literal, a pattern bash may expand (glob, brace, `~`), or dynamic (a variable). */
  readonly shapes: ReadonlyArray<Shape>
  /** Whether any word holds a variable expansion (its text is kept as written). */
  readonly dynamic: boolean
}

export interface ShellAnalysis {
  /** Top-level simple commands, in order: what an allow rule must cover, every one of them. */
  readonly commands: ReadonlyArray<SimpleCommand>
  /** Every command that might run, nested ones included: what a deny rule is matched against. */
  readonly candidates: ReadonlyArray<SimpleCommand>
  /** Why no prefix rule may allow this command; empty when every construct is proven inert. */
  readonly concerns: ReadonlyArray<string>
  /** Why some command this line runs cannot be known from it: a deny rule that could match refuses. */
  readonly opaque: ReadonlyArray<string>
  /** Why the line is refused whatever the rules and mode say: bash cannot parse it, or it opens a network connection (`/dev/tcp`). */
  readonly refusals: ReadonlyArray<string>
  /** Files read through `<` redirections. */
  readonly inputs: ReadonlyArray<{ readonly value: string; readonly shape: Shape }>
}

export const toSimple = (words: ReadonlyArray<Word>): SimpleCommand => ({
  words: words.map((w) => w.value),
  shapes: words.map((w) => w.shape),
  dynamic: words.some((w) => w.shape === "dynamic")
})
