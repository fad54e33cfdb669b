/**
 * The little languages programs take as an argument: a sed script or an awk program can write
 * files (`w`, `print > f`), read others (`r`, `getline < f`, `ARGV`) or run commands (`e`,
 * `s///e`, `system()`, `|`). Each is read here only as far as is needed to say which; what is
 * not understood counts as running a command.
 */

/** What a sed script does besides printing and editing its input. */
export interface SedEffects {
  /** It runs a command (`e`, `s///e`), or a part of it is not understood. */
  readonly runs: boolean
  /** It writes a file (`w`, `W`, `s///w`). */
  readonly writes: boolean
  /** It reads another file or adds text (`r`, `R`, `a`, `i`, `c`…): not read-only, but runs nothing. */
  readonly other: boolean
}

/** sed commands that only print, edit the pattern space or branch. */
const SED_PLAIN = new Set([..."pdDnNgGhHxlP=qQzF{}"])
const UNKNOWN: SedEffects = { runs: true, writes: false, other: true }

/** Reads a delimited part (`/re/`, the parts of `s///`) from `at`; returns the index after the closing delimiter. */
const delimited = (script: string, at: number, delimiter: string): number => {
  let i = at
  while (i < script.length && script[i] !== delimiter) {
    if (script[i] === "\n") return -1
    i += script[i] === "\\" ? 2 : 1
  }
  return i < script.length ? i + 1 : -1
}

/** One sed address (`12`, `$`, `/re/I`, `\%re%`, `first~step`, `+N`); returns the index after it. */
const sedAddress = (script: string, at: number): number => {
  let i = at
  if (script[i] === "/" || script[i] === "\\") {
    i = script[i] === "/" ? delimited(script, i + 1, "/") : delimited(script, i + 2, script[i + 1] ?? "\n")
    while (i > 0 && (script[i] === "I" || script[i] === "M")) i++
    return i
  }
  if (script[i] === "$") return i + 1
  while (i < script.length && /[0-9~+]/.test(script[i]!)) i++
  return i
}

/** Where a line of text (`a text`, `a\` + lines) ends: a backslash-newline continues it. */
const textEnd = (script: string, at: number): number => {
  let i = at
  while (i < script.length && script[i] !== "\n") i += script[i] === "\\" ? 2 : 1
  return i
}

/** What a sed script does, as GNU sed reads it (a label after `b`, `t`, `T` ends at a blank). */
export const sedEffects = (script: string): SedEffects => {
  let runs = false
  let writes = false
  let other = false
  let i = 0
  const n = script.length
  while (i < n) {
    while (i < n && /[\s;]/.test(script[i]!)) i++
    if (i >= n) break
    if (script[i] === "#") {
      i = textEnd(script, i)
      continue
    }
    i = sedAddress(script, i)
    if (i < 0) return UNKNOWN
    if (script[i] === ",") i = sedAddress(script, i + 1)
    if (i < 0) return UNKNOWN
    while (i < n && /[ \t!]/.test(script[i]!)) i++
    const command = script[i]
    if (command === undefined) return UNKNOWN
    i++
    if (SED_PLAIN.has(command)) {
      if (/[qQlL]/.test(command)) while (i < n && /[0-9 \t]/.test(script[i]!)) i++
    } else if (command === "b" || command === "t" || command === "T") {
      while (i < n && /[ \t]/.test(script[i]!)) i++
      while (i < n && !/[\s;]/.test(script[i]!)) i++
    } else if (command === ":") {
      const end = script.slice(i).search(/[;\n]/)
      const label = end < 0 ? script.slice(i) : script.slice(i, i + end)
      if (/\s/.test(label.trim()) || label.trim() === "") return UNKNOWN
      i = end < 0 ? n : i + end
    } else if (command === "s" || command === "y") {
      const delimiter = script[i]
      if (delimiter === undefined || /[\s\\\n]/.test(delimiter)) return UNKNOWN
      i = delimited(script, i + 1, delimiter)
      if (i >= 0) i = delimited(script, i, delimiter)
      if (i < 0) return UNKNOWN
      if (command === "s") {
        while (i < n && /[gpiImMe0-9w]/.test(script[i]!)) {
          if (script[i] === "e") runs = true
          if (script[i] === "w") {
            writes = true
            i = textEnd(script, i)
            break
          }
          i++
        }
      }
      if (i < n && !/[\s;}]/.test(script[i]!)) return UNKNOWN
    } else if (command === "e") {
      runs = true
      i = textEnd(script, i)
    } else if (command === "w" || command === "W") {
      writes = true
      i = textEnd(script, i)
    } else if (/[rRaic]/.test(command)) {
      other = true
      i = textEnd(script, i)
    } else if (command === "v") {
      while (i < n && !/[;\n]/.test(script[i]!)) i++
    } else return UNKNOWN
  }
  return { runs, writes, other }
}

/** A sed command line, read as GNU sed reads its options. */
export interface SedCall {
  readonly scripts: ReadonlyArray<string>
  /** It reads its script from a file (`-f`), which this check does not see. */
  readonly fromFile: boolean
  /** It edits its files in place (`-i`). */
  readonly inPlace: boolean
  /** The input files. */
  readonly files: ReadonlyArray<string>
  /** An option this check does not know. */
  readonly unknown: string | undefined
}

const SED_FLAGS = /^-[nErsuzb]+$/
const SED_LONG = [
  ..."expression file in-place line-length null-data zero-terminated quiet silent regexp-extended separate".split(" "),
  ..."sandbox unbuffered posix debug binary follow-symlinks help version".split(" ")
]

/** A long option by its name or an unambiguous prefix, as getopt reads it. */
const longName = (given: string): string | undefined => {
  const all = SED_LONG.filter((l) => l.startsWith(given))
  return SED_LONG.includes(given) ? given : all.length === 1 ? all[0] : undefined
}

export const sedCall = (args: ReadonlyArray<string>): SedCall => {
  const scripts: Array<string> = []
  const files: Array<string> = []
  let fromFile = false
  let inPlace = false
  let unknown: string | undefined
  let dashes = false
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!
    if (dashes || a === "-" || !a.startsWith("-")) files.push(a)
    else if (a === "--") dashes = true
    else if (a.startsWith("--")) {
      const [given, value] = a.slice(2).split(/=(.*)/s, 2) as [string, string | undefined]
      const name = longName(given)
      if (name === "expression" || name === "file") {
        fromFile ||= name === "file"
        scripts.push(value ?? args[++i] ?? "")
      } else if (name === "in-place") inPlace = true
      else if (name === "line-length") i += value === undefined ? 1 : 0
      else if (name === undefined) unknown ??= a
    } else if (SED_FLAGS.test(a)) continue
    else if (/^-[nErsuzb]*[ef]/.test(a)) {
      // A cluster ending in e or f: the rest of the word, or the next one, is the value.
      const at = a.search(/[ef]/)
      fromFile ||= a[at] === "f"
      scripts.push(at + 1 < a.length ? a.slice(at + 1) : (args[++i] ?? ""))
    } else if (/^-[nErsuzb]*i/.test(a)) inPlace = true
    else if (/^-[nErsuzb]*l/.test(a)) {
      if (/l$/.test(a)) i++
    } else unknown ??= a
  }
  if (scripts.length === 0 && !fromFile && files.length > 0) scripts.push(files.shift()!)
  return { scripts: fromFile ? [] : scripts, fromFile, inPlace, files, unknown }
}

/** Names in an awk program that run commands, write or read files other than its operands. */
const AWK_REACH = /system|getline|close|fflush|\||>|@|ENVIRON|PROCINFO|ARGV|ARGC|printf?\s*\(?[^;}]*>/

/** Whether an awk program has no way to run a command, write a file or read one not named on the line. */
export const awkProgramIsInert = (program: string): boolean => !AWK_REACH.test(program)

/** Whether an awk program can run a command (`system`, pipes) or load code (`@load`). */
export const awkProgramRuns = (program: string): boolean => /system|\||@|\/inet/.test(program)
