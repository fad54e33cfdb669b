/**
 * Path helpers shared by the file tools.
 *
 * - A path the model gives is resolved against the project root; an absolute path is kept
 *   as it is, and `~` is NOT expanded (`~/x` is a directory named `~` under the root).
 * - A path in output is shown relative to the root when it lies inside it (so it can be
 *   passed straight back to `read`), and absolute otherwise. Separators are always `/`.
 *
 * The pure helpers use `node:path` (no I/O): `Tool.paths` is synchronous. Everything that
 * touches the disk goes through the `FileSystem` service.
 */
import * as NodePath from "node:path"
import { Effect, type FileSystem, type PlatformError } from "effect"
import { fail, type ToolFailure, TransientFailure } from "../tool/errors.ts"
import { readableError } from "../tool/readable-error.ts"

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

// ---------------------------------------------------------------------------------------------
// Did-you-mean suggestions

/** Edit distance where swapping two neighbours counts as one edit (optimal string alignment). */
const editDistance = (a: string, b: string): number => {
  if (a === b) return 0
  const rows: Array<Array<number>> = [Array.from({ length: b.length + 1 }, (_, j) => j)]
  for (let i = 1; i <= a.length; i++) {
    const row = [i]
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1
      let d = Math.min(rows[i - 1]![j]! + 1, row[j - 1]! + 1, rows[i - 1]![j - 1]! + cost)
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d = Math.min(d, rows[i - 2]![j - 2]! + 1)
      row.push(d)
    }
    rows.push(row)
  }
  return rows[a.length]![b.length]!
}

const stem = (name: string): string => {
  const ext = NodePath.extname(name)
  return (ext.length > 0 && ext.length < name.length ? name.slice(0, -ext.length) : name).toLowerCase()
}

/**
 * Up to `max` names in `names` that look like `wanted`: same name in another case, same stem
 * with another extension, one containing the other, or a small edit distance. Best first.
 */
export const similarNames = (wanted: string, names: ReadonlyArray<string>, max = 3): Array<string> => {
  const w = wanted.toLowerCase()
  const ws = stem(wanted)
  const scored: Array<{ name: string; score: number }> = []
  for (const name of names) {
    if (name === wanted) continue
    const n = name.toLowerCase()
    const ns = stem(name)
    let score: number
    if (n === w) score = 0
    else if (ns === ws) score = 1
    else if (ws.length >= 3 && ns.length >= 3 && (ns.includes(ws) || ws.includes(ns))) score = 2
    else {
      const d = editDistance(w, n)
      if (d > Math.max(1, Math.floor(Math.max(w.length, n.length) / 3))) continue
      score = 3 + d
    }
    scored.push({ name, score })
  }
  scored.sort((a, b) => a.score - b.score || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
  return scored.slice(0, max).map((s) => s.name)
}

/**
 * The message for a path that does not exist: names up to 3 similarly named entries of the
 * same directory when there are any, or says that the directory itself is missing.
 */
export const notFoundMessage = (
  fs: FileSystem.FileSystem,
  root: string,
  abs: string,
  what = "File"
): Effect.Effect<string> =>
  Effect.gen(function* () {
    const dir = NodePath.dirname(abs)
    const base = `${what} not found: ${displayPath(root, abs)}.`
    const names = yield* fs.readDirectory(dir).pipe(Effect.option)
    if (names._tag === "None") {
      return `${base} Its directory ${displayDir(root, dir)} does not exist either; use glob to find the file.`
    }
    const similar = similarNames(NodePath.basename(abs), names.value)
    if (similar.length === 0) return `${base} Use glob or ls to find the right path.`
    const shown = similar.map((n) => displayPath(root, NodePath.join(dir, n)))
    return `${base} Did you mean ${shown.join(", ")}?`
  })

// ---------------------------------------------------------------------------------------------
// FileSystem errors as tool errors

/** Turns an unexpected file-system error into a failure the model can act on. */
export const fsFailure = (
  e: PlatformError.PlatformError,
  root: string,
  abs: string
): ToolFailure | TransientFailure => {
  const shown = displayPath(root, abs)
  const reason = e.reason
  switch (reason._tag) {
    case "Busy":
    case "WouldBlock":
    case "TimedOut":
      return new TransientFailure({ message: `${shown} is busy (${reason._tag}); try again.` })
    case "PermissionDenied":
      return fail(`Permission denied: ${shown}. The file cannot be read by this process.`)
    case "NotFound":
      return fail(`Not found: ${shown}.`)
    default:
      return fail(`Cannot access ${shown}: ${readableError(e)}`)
  }
}

/** The first `bytes` bytes of a file (fewer when it is shorter). */
export const readHead = (
  fs: FileSystem.FileSystem,
  abs: string,
  bytes: number
): Effect.Effect<Uint8Array, PlatformError.PlatformError> =>
  Effect.gen(function* () {
    const file = yield* fs.open(abs)
    const head = new Uint8Array(bytes)
    let filled = 0
    while (filled < bytes) {
      const n = yield* file.read(head.subarray(filled))
      if (n === 0) break
      filled += n
    }
    return head.subarray(0, filled)
  }).pipe(Effect.scoped)

/** `stat`, failing with the did-you-mean message when the path does not exist. */
export const statOrFail = (
  fs: FileSystem.FileSystem,
  root: string,
  abs: string,
  what = "File"
): Effect.Effect<FileSystem.File.Info, ToolFailure | TransientFailure> =>
  fs
    .stat(abs)
    .pipe(
      Effect.catchTag("PlatformError", (e) =>
        e.reason._tag === "NotFound"
          ? Effect.flatMap(notFoundMessage(fs, root, abs, what), (message) => Effect.fail(fail(message)))
          : Effect.fail(fsFailure(e, root, abs))
      )
    )
