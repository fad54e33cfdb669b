/**
 * Lines the grammar accepts and bash does not: a case terminator outside `case` (`ls ;; pwd`)
 * and a reserved word where a command's name should be (`fi`, `done`, `}`). bash refuses the
 * whole line; so does this check, rather than judge commands bash would never read that way.
 */
import type { Node } from "web-tree-sitter"

const TERMINATORS = new Set([";;", ";&", ";;&"])
const RESERVED = new Set(
  "then else elif fi do done esac in { } [[ ]] coproc function select case if for while until".split(" ")
)

/** Why bash cannot parse this tree, or undefined. */
export const syntaxError = (root: Node): string | undefined => {
  const stack: Array<Node> = [root]
  while (stack.length > 0) {
    const node = stack.pop()!
    if (TERMINATORS.has(node.type) && !node.isNamed && node.parent?.type !== "case_item")
      return `bash cannot parse it: ${node.type} outside a case statement`
    if (node.type === "command_name") {
      const word = node.namedChildren[0]
      if (word?.type === "word" && RESERVED.has(word.text))
        return `bash cannot parse it: the reserved word ${word.text} where a command should be`
    }
    for (const c of node.children) stack.push(c)
  }
  return undefined
}
