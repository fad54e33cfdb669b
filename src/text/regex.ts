/**
 * Regexes a model supplies (the `output` tool's pattern, grep's TypeScript backend) run on
 * RE2JS, a linear-time engine with RE2's syntax (the same family as ripgrep's): a pattern such
 * as `(a+)+$` cannot backtrack for ever on the event loop and freeze the whole process.
 * What RE2 cannot do in linear time (backreferences, lookahead, atomic groups, possessive
 * quantifiers) is refused with a message that says what to write instead. Captureless
 * lookbehinds are linear in RE2JS and allowed.
 */
import { RE2JS } from "re2js"

export interface ModelRegex {
  /** Whether the pattern matches somewhere in `text`. */
  readonly test: (text: string) => boolean
  /** Calls `f` with the start and end (UTF-16 offsets) of each match in `text`, left to right. */
  readonly eachMatch: (text: string, f: (start: number, end: number) => void) => void
}

export interface RegexFlags {
  /** Letters match either case (rg's `-i`). */
  readonly caseInsensitive?: boolean
  /** `.` matches a line end too and `^`/`$` match at every line (rg's `-U --multiline-dotall`). */
  readonly multiline?: boolean
}

/** Why a pattern was refused, model-readable: what is wrong and what to use instead. */
export interface RegexRefusal {
  readonly _tag: "RegexRefusal"
  /** The whole explanation: what is wrong, the syntax expected, what to write instead. */
  readonly message: string
  /** What is wrong and, for syntax RE2 refuses by design, what to write instead (no generic hint). */
  readonly reason: string
}

/** What the model may have meant, for each syntax RE2 refuses. */
const ADVICE: ReadonlyArray<readonly [RegExp, string]> = [
  [
    /invalid escape sequence: `\\[1-9]`|invalid escape sequence: `\\k`/,
    "Backreferences (\\1, \\k<name>) are not supported (the engine runs in linear time): match the repeated text itself, or search for the first part and read the lines around it."
  ],
  [
    /unsupported Perl syntax: `\(\?[=!]`/,
    "Lookahead ((?=…), (?!…)) is not supported: match the following text directly (foo(?=bar) → foobar), or search for the wider pattern and read the lines."
  ],
  [/unsupported Perl syntax: `\(\?>`/, "Atomic groups (?>…) are not supported: write the group as (?:…)."],
  [
    /invalid nested repetition operator: `[*+?}][+*?]`/,
    "Possessive or doubled quantifiers (a++, a*+) are not supported: use a single quantifier (a+)."
  ],
  [/invalid repeat count/, "A repeat count may be at most 1000 ({1,1000})."],
  [/invalid capture in lookbehind/, "A lookbehind may not capture: write its groups as (?:…)."],
  [/invalid escape sequence: `\\Z`/, "\\Z is not supported: use $ (or \\z) for the end of the line."],
  [/invalid escape sequence: `\\c`/, "\\cX control escapes are not supported: use \\x{01}-style escapes."]
]

const JS_ESCAPE = /u(?:([0-9a-fA-F]{4})|\{([0-9a-fA-F]{1,6})\})/y

/** JavaScript's `\uXXXX` and `\u{X…}` as RE2's `\x{…}`: models often write JavaScript syntax. */
const fromJsEscapes = (pattern: string): string => {
  if (!pattern.includes("\\u")) return pattern
  let out = ""
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!
    if (c !== "\\") {
      out += c
      continue
    }
    JS_ESCAPE.lastIndex = i + 1
    const js = JS_ESCAPE.exec(pattern)
    if (js !== null) {
      out += `\\x{${js[1] ?? js[2]}}`
      i += js[0].length
    } else {
      out += `\\${pattern[i + 1] ?? ""}`
      i++
    }
  }
  return out
}

/**
 * Compiles a model's pattern. Leading inline flags such as `(?i)` are RE2 syntax already.
 * Never throws: a pattern RE2 refuses comes back as a RegexRefusal.
 */
export const compileModelRegex = (pattern: string, flags: RegexFlags = {}): ModelRegex | RegexRefusal => {
  try {
    const re = RE2JS.compile(
      fromJsEscapes(pattern),
      RE2JS.LOOKBEHINDS |
        (flags.caseInsensitive === true ? RE2JS.CASE_INSENSITIVE : 0) |
        (flags.multiline === true ? RE2JS.DOTALL | RE2JS.MULTILINE : 0)
    )
    return {
      test: (text) => re.test(text),
      eachMatch: (text, f) => {
        const m = re.matcher(text)
        while (m.find()) f(m.start(), m.end())
      }
    }
  } catch (e) {
    const detail = (e instanceof Error ? e.message : String(e)).replace(/^error parsing regexp: /, "")
    const advice = ADVICE.find(([cause]) => cause.test(detail))?.[1]
    const syntax = "Patterns use RE2 syntax (as ripgrep does), which runs in linear time."
    return {
      _tag: "RegexRefusal",
      message: `${detail}. ${syntax} ${advice ?? "Escape regex metacharacters such as ( ) [ ] { } . * + ? | \\ with a backslash to match them literally."}`,
      reason: advice === undefined ? `${detail}.` : `${detail}. ${syntax} ${advice}`
    }
  }
}

export const isRefusal = <A extends object>(r: A | RegexRefusal): r is RegexRefusal =>
  "_tag" in r && r._tag === "RegexRefusal"
