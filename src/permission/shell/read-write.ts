/**
 * bash's read-write redirection, `[n]<>word`: it opens the file for reading and writing (and
 * creates it). tree-sitter-bash has no such operator and reads the line as an error, so a line
 * with `<>` is parsed with each `<>` that bash reads as the operator spelled `>|` instead — the
 * same length, so every other node keeps its place — and the analysis is told where those are
 * (`readWrite`): a write to its target, like `>`. Which `<>` are operators is what the grammar
 * says: one is rewritten only where `>|` then stands as a redirection's operator at that very
 * place (never inside quotes, a heredoc or a comment), and the line is parsed again with only
 * those; a `<>` bash lexes otherwise (`<<>` is `<<` then `>`) is left as it is, and fails.
 */
import type { Node, Parser, Tree } from "web-tree-sitter"

export interface ParsedLine {
  readonly tree: Tree
  /** Where a redirection's operator is bash's `<>` (its start index in the line). */
  readonly readWrite: ReadonlySet<number>
}

/** The starts of `<>` that bash's lexer takes as that operator (not the tail of `<<`). */
const candidatesIn = (text: string): Array<number> => {
  const out: Array<number> = []
  for (let i = text.indexOf("<>"); i >= 0; i = text.indexOf("<>", i + 1)) if (text[i - 1] !== "<") out.push(i)
  return out
}

/** `text` with the `<>` at each of `at` spelled `>|`. */
const spelled = (text: string, at: Iterable<number>): string => {
  let out = ""
  let from = 0
  for (const i of [...at].sort((a, b) => a - b)) {
    out += `${text.slice(from, i)}>|`
    from = i + 2
  }
  return out + text.slice(from)
}

/** Which of `wanted` start a `>|` operator of a redirection in `root`. */
const operatorsAt = (root: Node, wanted: ReadonlySet<number>): Set<number> => {
  const found = new Set<number>()
  const walk = (node: Node) => {
    if (node.type === "file_redirect")
      for (const c of node.children)
        if (!c.isNamed && c.type === ">|" && wanted.has(c.startIndex)) found.add(c.startIndex)
    for (const c of node.namedChildren) walk(c)
  }
  walk(root)
  return found
}

/** Parses a line as bash reads it, `<>` included (above); null when the grammar gives no tree. */
export const parseLine = (parser: Parser, text: string): ParsedLine | null => {
  const candidates = candidatesIn(text)
  const plain = () => {
    const tree = parser.parse(text)
    return tree === null ? null : { tree, readWrite: new Set<number>() }
  }
  if (candidates.length === 0) return plain()
  const trial = parser.parse(spelled(text, candidates))
  if (trial === null) return plain()
  let operators: Set<number>
  try {
    operators = operatorsAt(trial.rootNode, new Set(candidates))
  } finally {
    trial.delete()
  }
  if (operators.size === 0) return plain()
  const tree = parser.parse(spelled(text, operators))
  if (tree === null) return plain()
  // The `<>` left as written (quoted, in a heredoc) may move what the grammar reads: all must hold.
  if (operatorsAt(tree.rootNode, operators).size !== operators.size) {
    tree.delete()
    return plain()
  }
  return { tree, readWrite: operators }
}
