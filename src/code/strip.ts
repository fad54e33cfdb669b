/**
 * TypeScript in a program: its types are stripped with Node's own `stripTypeScriptTypes`
 * (node:module, Node ≥ 22.13), only when the text does not parse as JavaScript already. Node
 * marks the function experimental and warns once on stderr; that warning is not the person's
 * business, so it is held back around the call.
 */
import * as nodeModule from "node:module"

type Strip = (code: string, options?: { readonly mode?: "strip" | "transform" }) => string

const strip = (nodeModule as unknown as { readonly stripTypeScriptTypes?: Strip }).stripTypeScriptTypes

/** The program with its types removed, or undefined when it cannot be (not TypeScript, or no stripper). */
export const stripTypes = (source: string): string | undefined => {
  if (strip === undefined) return undefined
  const emit = process.emitWarning
  process.emitWarning = () => {}
  try {
    // A program is a function body (top-level return and await): strip it as one. Stripping
    // blanks types in place, so the body keeps its offsets and line numbers.
    const head = "async function program() {"
    const out = strip(`${head}${source}\n}`, { mode: "strip" })
    return out.slice(head.length, out.length - 2)
  } catch {
    return undefined
  } finally {
    process.emitWarning = emit
  }
}
