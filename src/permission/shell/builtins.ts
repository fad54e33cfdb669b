/**
 * Bash builtins run inside the shell itself: they can assign variables (`printf -v PATH`,
 * `read`, `declare`), evaluate an array subscript, which is code (`test -v 'a[$(…)]'`), or change
 * how later words run (`cd`, `alias`, `set`, `shopt`, `enable`). So a builtin is allowed by a
 * rule only when it is one of the few proven inert here, with its arguments checked; every other
 * builtin asks, whatever the rules say.
 */
import type { Word } from "./analysis.ts"

export const BUILTINS: ReadonlySet<string> = new Set(
  (
    ". : [ alias bg bind break builtin caller cd command compgen complete compopt continue declare dirs disown " +
    "echo enable eval exec exit export false fc fg getopts hash help history jobs kill let local logout mapfile " +
    "popd printf pushd pwd read readarray readonly return set shift shopt source suspend test times trap true " +
    "type typeset ulimit umask unalias unset wait"
  ).split(" ")
)

/** Builtins that may evaluate an argument as an arithmetic expression or a subscript. */
export const EVALUATES_SUBSCRIPTS: ReadonlySet<string> = new Set(
  "printf read declare typeset local export readonly test [ let mapfile readarray getopts unset wait".split(" ")
)

/** Whether a literal argument may hold a subscript with code in it (`a[$(…)]`, `a[`…`]`). */
export const holdsSubscriptCode = (value: string) => value.includes("[") && /[$`]/.test(value)

type Check = (args: ReadonlyArray<Word>) => string | undefined

const always: Check = () => undefined

/** The builtins proven inert, each with what would make it not so. */
const INERT: Readonly<Record<string, Check>> = {
  ":": always,
  true: always,
  false: always,
  echo: always,
  pwd: always,
  times: always,
  help: always,
  type: always,
  printf: (args) => {
    const first = args[0]
    // Options come before the format; `-v NAME` assigns the output to a variable.
    if (first === undefined) return undefined
    return first.shape !== "literal"
      ? "printf with a format that is not plain text"
      : first.value.startsWith("-") && first.value !== "--"
        ? `printf ${first.value} (it can assign a variable)`
        : undefined
  },
  test: (args) => testCheck("test", args),
  "[": (args) => testCheck("[", args),
  command: (args) =>
    args.length > 1 && args.every((a, i) => a.shape === "literal" && (i > 0 || /^-[vV]$/.test(a.value)))
      ? undefined
      : "command (it runs another command)"
}

const testCheck = (name: string, args: ReadonlyArray<Word>): string | undefined => {
  // -v and -R name a variable, and a subscript in the name is evaluated.
  const bad = args.find((a) => a.shape !== "literal")
  if (bad !== undefined) return `${name} with an argument that is not plain text (${bad.text})`
  const v = args.find((a) => a.value === "-v" || a.value === "-R")
  return v === undefined ? undefined : `${name} ${v.value} (it evaluates a variable name, subscripts included)`
}

/**
 * Why running builtin `name` with these arguments is not proven inert, or undefined when it is.
 * `name` must already be known to be a builtin (no slash, in BUILTINS).
 */
export const builtinConcern = (name: string, args: ReadonlyArray<Word>): string | undefined => {
  const check = INERT[name]
  if (check === undefined) return `it runs the shell builtin ${name}, which can change the shell itself`
  const why = check(args)
  return why === undefined ? undefined : `it runs the shell builtin ${why}`
}
