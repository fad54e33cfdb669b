/**
 * What a word is after bash's quote removal, for the node types this analysis understands.
 * A word is `literal` when its value is exactly what the program receives, `pattern` when bash
 * may still expand it into other words (globs, braces, a leading `~`) without running anything,
 * and `dynamic` when its value comes from a variable or a substitution.
 */
import type { Node } from "web-tree-sitter"
import type { Shape, Word } from "./analysis.ts"

/** `$NAME`, `$1`, `$@`…: a plain parameter, no operator. */
export const PLAIN_SIMPLE_EXPANSION = /^\$(?:[A-Za-z_][A-Za-z0-9_]*|[0-9]|[@*#?$!_-])$/
/** `${NAME}`, `${10}`, `${@}`: braces and a name, nothing else (no `!`, `@P`, `:-`, subscript). */
export const PLAIN_EXPANSION = /^\$\{(?:[A-Za-z_][A-Za-z0-9_]*|[0-9]+|[@*#?$!-])\}$/

const worst = (a: Shape, b: Shape): Shape =>
  a === "dynamic" || b === "dynamic" ? "dynamic" : a === "pattern" || b === "pattern" ? "pattern" : "literal"

/** Unquoted text: a backslash quotes the next character; `\<newline>` disappears. */
export const unescapeUnquoted = (text: string) => text.replace(/\\\n/g, "").replace(/\\(.)/gs, "$1")
/** Inside double quotes only `$`, backtick, `"`, `\` and newline can be escaped. */
export const unescapeDouble = (text: string) => text.replace(/\\\n/g, "").replace(/\\([$`"\\])/g, "$1")

/** Whether unquoted text holds a character bash may expand (glob, brace, tilde). */
const expandable = (text: string) =>
  /(?:^|[^\\])(?:\\\\)*[*?[{]/.test(text) || text.startsWith("~") || /[=:]~/.test(text)

const SIMPLE_ESCAPES: Readonly<Record<string, string>> = {
  a: "\x07",
  b: "\b",
  e: "\x1b",
  E: "\x1b",
  f: "\f",
  n: "\n",
  r: "\r",
  t: "\t",
  v: "\v",
  "\\": "\\",
  "'": "'",
  '"': '"',
  "?": "?"
}

/** Decodes the inside of `$'…'` as bash does; bash stops the word at a NUL byte. */
export const decodeAnsiC = (inner: string): string => {
  const out = inner.replace(
    /\\(?:([abeEfnrtv\\'"?])|([0-7]{1,3})|x([0-9A-Fa-f]{1,2})|u([0-9A-Fa-f]{1,4})|U([0-9A-Fa-f]{1,8})|c(.)|)/gs,
    (whole, simple?: string, oct?: string, hex?: string, u4?: string, u8?: string, ctl?: string) => {
      if (simple !== undefined) return SIMPLE_ESCAPES[simple] ?? whole
      if (oct !== undefined) return String.fromCharCode(Number.parseInt(oct, 8) & 0xff)
      if (hex !== undefined) return String.fromCharCode(Number.parseInt(hex, 16))
      const code = u4 ?? u8
      if (code !== undefined) {
        const n = Number.parseInt(code, 16)
        return n <= 0x10ffff ? String.fromCodePoint(n) : whole
      }
      if (ctl !== undefined) return String.fromCharCode(ctl.charCodeAt(0) & 0x1f)
      return whole
    }
  )
  const nul = out.indexOf("\0")
  return nul < 0 ? out : out.slice(0, nul)
}

/**
 * A word's value, for the node types a word may be made of. `onPart` is called for every part
 * that is not plain text (expansions, substitutions, unknown nodes), so the caller can judge it;
 * it returns the part's shape.
 */
export const evalWord = (node: Node, onPart: (part: Node) => void): Word => {
  const text = node.text
  switch (node.type) {
    case "word": {
      return { value: unescapeUnquoted(text), shape: expandable(text) ? "pattern" : "literal", text }
    }
    case "number":
      return { value: text, shape: "literal", text }
    case "raw_string":
      return { value: text.slice(1, -1), shape: "literal", text }
    case "ansi_c_string":
      return { value: decodeAnsiC(text.slice(2, -1)), shape: "literal", text }
    case "string": {
      let shape: Shape = text.startsWith('$"') ? "dynamic" : "literal" // $"…" is translated at run time
      for (const c of node.namedChildren) {
        if (c.type === "string_content") continue
        onPart(c)
        shape = "dynamic"
      }
      const inner = text.slice(text.indexOf('"') + 1, -1)
      return { value: unescapeDouble(inner), shape, text }
    }
    case "concatenation": {
      let value = ""
      let shape: Shape = "literal"
      for (const c of node.namedChildren) {
        const w = evalWord(c, onPart)
        value += w.value
        shape = worst(shape, w.shape)
      }
      // Text between named children (a bare `$`, `{`) is part of the word too.
      if (node.namedChildren.map((c) => c.text).join("") !== text) shape = worst(shape, "pattern")
      return { value, shape, text }
    }
    case "brace_expression":
      return { value: text, shape: "pattern", text }
    default:
      onPart(node)
      return { value: text, shape: "dynamic", text }
  }
}
