/** A rule's command text as words, read with the same grammar as the commands it is matched against. */

import type { ShellParser, Word } from "./analysis.ts"
import { WORDS } from "./nodes.ts"
import { stripWrappers } from "./runs.ts"
import { unsureCharacter, unsureEscape } from "./text.ts"
import { unwrap } from "./unwrap.ts"
import { evalWord } from "./words.ts"

/**
 * Splits a rule's command text into words with the same grammar (quotes removed): one simple
 * command of plain words, or undefined. Builtins and wrappers are fine here (`Bash(eval:*)`,
 * `Bash(sudo:*)` are rules a person may write); only the shape of the text is checked.
 */
export const ruleWords = (shellParser: ShellParser, text: string): ReadonlyArray<string> | undefined => {
  if (unsureCharacter(text) !== undefined || unsureEscape(text) || text.includes("\\\n")) return undefined
  const tree = unwrap(shellParser).parse(text)
  if (tree === null) return undefined
  try {
    const root = tree.rootNode
    const statements = root.namedChildren.filter((c) => c.type !== "comment")
    const command = statements[0]
    if (root.hasError || statements.length !== 1 || command?.type !== "command") return undefined
    const words: Array<Word> = []
    let plain = true
    for (const child of command.namedChildren) {
      const node = child.type === "command_name" ? child.namedChildren[0] : child
      if (node === undefined || !WORDS.has(node.type)) return undefined
      words.push(evalWord(node, () => (plain = false)))
    }
    return plain && words.length > 0 && words.every((w) => w.shape === "literal")
      ? stripWrappers(words).map((w) => w.value)
      : undefined
  } finally {
    tree.delete()
  }
}
