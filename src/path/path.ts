/**
 * Pure path helpers: no I/O, no dependency on the rest of the code, so every folder may use them.
 *
 * - A path the model gives is resolved against the project root; an absolute path is kept
 *   as it is, and `~` is NOT expanded (`~/x` is a directory named `~` under the root).
 * - A path in output is shown relative to the root when it lies inside it (so it can be
 *   passed straight back to `read`), and absolute otherwise. Separators are always `/`.
 *
 * They use `node:path` only, so `Tool.paths` stays synchronous.
 */
import * as NodePath from "node:path"

const toSlashes = (p: string): string => (NodePath.sep === "/" ? p : p.split(NodePath.sep).join("/"))

/** Resolves a model-given path against the project root. Absolute paths are kept; `~` is not expanded. */
export const resolvePath = (root: string, input: string): string =>
  isCleanAbsolute(input) ? input : NodePath.resolve(root, input)

/** An absolute path with nothing to normalise: path.resolve would return it unchanged. */
export const isCleanAbsolute = (p: string): boolean => NodePath.sep === "/" && p.startsWith("/") && !UNCLEAN.test(p)

/** True when `abs` is `dir` itself or lies below it. */
export const isInside = (dir: string, abs: string): boolean => {
  // Two clean absolute paths: a prefix test (path.relative resolves both sides first).
  if (isCleanAbsolute(dir) && isCleanAbsolute(abs)) return abs === dir || abs.startsWith(dir === "/" ? "/" : `${dir}/`)
  const rel = NodePath.relative(dir, abs)
  return rel === "" || (!rel.startsWith("..") && !NodePath.isAbsolute(rel))
}

/** `abs` relative to `dir` with `/` separators ("" for `dir` itself); undefined when outside. */
export const relativeInside = (dir: string, abs: string): string | undefined => {
  const fast = relativeFast(dir, abs)
  if (fast !== undefined) return fast
  return isInside(dir, abs) ? toSlashes(NodePath.relative(dir, abs)) : undefined
}

/** Any `.`/`..` segment, doubled or trailing slash, or backslash: needs the full path logic. */
const UNCLEAN = /(^|\/)\.\.?(\/|$)|\/\/|\/$|\\/

/**
 * The common case without path.relative (which resolves both sides and dominated glob's time
 * on large trees): a clean absolute path below a clean absolute directory is a plain suffix.
 */
const relativeFast = (dir: string, abs: string): string | undefined => {
  if (!dir.startsWith("/") || !abs.startsWith("/") || UNCLEAN.test(dir) || UNCLEAN.test(abs)) return undefined
  if (abs === dir) return ""
  const prefix = dir === "/" ? "/" : `${dir}/`
  return abs.startsWith(prefix) ? abs.slice(prefix.length) : undefined
}

/**
 * Renders an absolute path for output: relative to the root when inside it ("." for the
 * root itself), absolute otherwise.
 */
export const displayPath = (root: string, abs: string): string => {
  // Clean absolute paths inside the root (every listed file) need no resolving.
  const fast = relativeFast(root, abs)
  if (fast !== undefined) return fast === "" ? "." : fast
  const rel = relativeInside(NodePath.resolve(root), NodePath.resolve(abs))
  if (rel === undefined) return toSlashes(NodePath.resolve(abs))
  return rel === "" ? "." : rel
}

/** Renders a directory for output, ending with `/`. */
export const displayDir = (root: string, abs: string): string => {
  const shown = displayPath(root, abs)
  return shown === "." ? "./" : shown.endsWith("/") ? shown : `${shown}/`
}

/** The extension of a file name, lower-cased, without the dot ("" when there is none). */
export const extensionOf = (p: string): string => NodePath.extname(p).slice(1).toLowerCase()

export const dirnameOf = (p: string): string => NodePath.dirname(p)
export const basenameOf = (p: string): string => NodePath.basename(p)
export const joinPath = (...parts: ReadonlyArray<string>): string => NodePath.join(...parts)
/**
 * An entry of a directory: `dir` is absolute and normalized (as resolvePath and readdir give it)
 * and `name` a single name, so plain concatenation is enough; path.join would normalize again.
 */
export const childPath = (dir: string, name: string): string => (dir.endsWith("/") ? dir + name : `${dir}/${name}`)
