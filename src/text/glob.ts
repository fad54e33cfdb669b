/**
 * Glob patterns a model supplies (`glob`'s pattern, grep's `include`) matched in linear time.
 * picomatch reads the glob (its syntax: `**`, braces, classes, extglobs) and compiles it to a
 * backtracking RegExp, on which `+(a|aa)*b` or `*a*a*a*a*a*b` against a long name can run for
 * minutes; its regex runs here on RE2JS instead. The lookaheads picomatch adds for dot files
 * and empty segments are no-ops on the clean relative paths matched here (no `.` or `..`
 * segment, no empty one) and are dropped; a glob that still needs one (a negated extglob
 * `!(…)`) is refused with what to write instead.
 */
import picomatch from "picomatch"
import { RE2JS } from "re2js"
import { isRefusal, type RegexRefusal } from "./regex.ts"

/** picomatch's guards against `.`/`..` segments and empty ones, exactly as it writes them. */
const NO_OP_GUARDS = ["(?!(?:^|\\/)\\.{1,2}(?:\\/|$))", "(?!\\.{1,2}(?:\\/|$))", "(?=.)"]

const refusal = (glob: string, why: string): RegexRefusal => ({
  _tag: "RegexRefusal",
  message: `Invalid glob ${JSON.stringify(glob)}: ${why}`,
  reason: why
})

/**
 * A matcher for `glob` (picomatch's syntax, `dot: true`). With `basename`, the glob is matched
 * against the last segment of the path, as picomatch's option of that name does.
 */
export const compileModelGlob = (
  glob: string,
  options: { readonly basename?: boolean } = {}
): ((path: string) => boolean) | RegexRefusal => {
  // Compiled either way: what it refuses is refused (and its regex answers paths with a `/`).
  const full = compileFull(glob, options)
  if (isRefusal(full)) return full
  const simple = simpleNameGlob(glob)
  if (simple === undefined) return full
  if (options.basename === true) return (path) => path === glob || simple(path, path.lastIndexOf("/") + 1)
  // A glob without `/` matches no path with one but for picomatch's `\/?` after a trailing
  // star: a path with a `/` (never a name) is left to its regex.
  return (path) => (path.includes("/") ? full(path) : path === glob || simple(path, 0))
}

/**
 * The names a glob like `*.ts`, `test_*.py` or `*.{ts,tsx}` matches, tested with string
 * operations: a name filter (the warm index's, the walk's, grep's include and type) tests every
 * file of the tree, and RE2JS took ~1 µs a name, most of a repeated glob's time. Only letters,
 * digits, `_`, `.`, `-`, `*` and `{a,b}` groups (not nested, each with a comma, no `..`: picomatch
 * reads `{1..3}` as a range) are taken, as picomatch reads them: `*` any run of characters
 * (none, or a leading dot, too: `dot: true`), a group one of its alternatives. Anything else
 * (`?`, classes, extglobs, `**`) goes to picomatch's regex; test/text/glob.test.ts checks the
 * two against picomatch. The returned test reads `path` from `from` on.
 */
const SIMPLE_GLOB = /^[A-Za-z0-9_.\-*,]*(\{[A-Za-z0-9_.\-*]*,[A-Za-z0-9_.\-*,]*\}[A-Za-z0-9_.\-*,]*)*$/
const MAX_ALTERNATIVES = 64

const simpleNameGlob = (glob: string): ((path: string, from: number) => boolean) | undefined => {
  if (!SIMPLE_GLOB.test(glob) || glob.includes("..") || glob.includes("**")) return undefined
  // Every combination of the groups' alternatives, each split at its stars.
  let alternatives = [""]
  for (const piece of glob.split(/(\{[^}]*\})/)) {
    const options = piece.startsWith("{") ? piece.slice(1, -1).split(",") : [piece]
    alternatives = alternatives.flatMap((a) => options.map((o) => a + o))
    if (alternatives.length > MAX_ALTERNATIVES) return undefined
  }
  const parts = [...new Set(alternatives)].map((a) => a.split("*"))
  return (path, from) => {
    for (const p of parts) if (starMatch(p, path, from)) return true
    return false
  }
}

/**
 * Whether `path` from `from` on (no `/` there: the callers see to it) is `parts` joined by runs
 * of any characters. Greedy,
 * leftmost: with only `*` as a wildcard, the earliest place for each middle part is never worse
 * than a later one, so no backtracking is needed.
 */
const starMatch = (parts: ReadonlyArray<string>, path: string, from: number): boolean => {
  const first = parts[0]!
  if (parts.length === 1) return path.length - from === first.length && path.startsWith(first, from)
  if (!path.startsWith(first, from)) return false
  const last = parts[parts.length - 1]!
  const end = path.length - last.length
  let at = from + first.length
  if (end < at || !path.endsWith(last)) return false
  for (let i = 1; i < parts.length - 1; i++) {
    const part = parts[i]!
    const found = path.indexOf(part, at)
    if (found < 0 || found + part.length > end) return false
    at = found + part.length
  }
  return true
}

/** picomatch's regex for `glob`, run on RE2JS. */
const compileFull = (
  glob: string,
  options: { readonly basename?: boolean }
): ((path: string) => boolean) | RegexRefusal => {
  let source: string
  try {
    source = picomatch.makeRe(glob, { dot: true }).source
  } catch (e) {
    return refusal(glob, `${e instanceof Error ? e.message : String(e)}.`)
  }
  for (const guard of NO_OP_GUARDS) source = source.split(guard).join("")
  let re: RE2JS
  try {
    re = RE2JS.compile(source)
  } catch {
    return refusal(
      glob,
      "negated patterns (!(…)) cannot be matched in linear time. Match the wider set with a plain glob (e.g. `*.ts`) and narrow it with grep or a second glob."
    )
  }
  // As picomatch: a path equal to the glob matches (a name with brackets in it), and with
  // `basename` the last segment is what is matched.
  return options.basename === true
    ? (path) => path === glob || re.test(path.slice(path.lastIndexOf("/") + 1))
    : (path) => path === glob || re.test(path)
}
