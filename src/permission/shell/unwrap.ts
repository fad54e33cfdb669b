/** The parser behind the opaque ShellParser; only implementations import this, so no declaration names web-tree-sitter. */
import type { Parser } from "web-tree-sitter"
import type { ShellParser } from "./analysis.ts"

export const unwrap = (parser: ShellParser): Parser => parser as unknown as Parser
