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
import type { RegexRefusal } from "./regex.ts"

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
