/**
 * The built-in list of read-only commands: programs (and git subcommands) that only read and
 * print, each with the options that would make it write a file, run a program or reach the
 * network refused. A command on the list runs without asking (docs/permissions.md lists them).
 *
 * Options are matched as GNU getopt reads them: short options anywhere in a cluster (`-uo`),
 * long options by any unambiguous prefix (`--out=f` is `--output=f`), and nothing after `--`.
 */
import type { SimpleCommand } from "./analysis.ts"
import { awkProgramIsInert, sedScriptIsInert } from "./scripts.ts"

interface Spec {
  /** Short options that write, execute or reach the network. */
  readonly short?: string
  /** Long options (without `--`) that do. */
  readonly long?: ReadonlyArray<string>
  /** What the tables cannot say; returns why not, or undefined. */
  readonly check?: (args: ReadonlyArray<string>) => string | undefined
  /** False for programs that never open their operands (`echo /etc`): no path check. */
  readonly paths?: false
}

const optionsOf = (args: ReadonlyArray<string>) => {
  const end = args.indexOf("--")
  return end < 0 ? args : args.slice(0, end)
}

/** The first refused option among the arguments, by the spec's tables. */
const refusedOption = (spec: Spec, args: ReadonlyArray<string>): string | undefined =>
  optionsOf(args).find((a) => {
    if (a.startsWith("--")) {
      const name = a.slice(2).split("=")[0]!
      return name !== "" && (spec.long ?? []).some((l) => l.startsWith(name))
    }
    return a.startsWith("-") && a.length > 1 && [...a.slice(1)].some((c) => (spec.short ?? "").includes(c))
  })

const noOperands =
  (what: string) =>
  (args: ReadonlyArray<string>): string | undefined =>
    args.some((a) => !a.startsWith("-")) ? `${what} with an operand` : undefined

const FIND_REFUSED = /^-(exec|execdir|ok|okdir|delete|fprint|fprint0|fprintf|fls)$/

const sed = (args: ReadonlyArray<string>): string | undefined => {
  const scripts: Array<string> = []
  let operands = 0
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!
    if (a === "--expression" || /^-[nErsuz]*e$/.test(a)) scripts.push(args[++i] ?? "")
    else if (a.startsWith("--expression=")) scripts.push(a.slice("--expression=".length))
    else if (
      /^-[nErsuz]+$/.test(a) ||
      /^--(quiet|silent|regexp-extended|separate|unbuffered|null-data|posix|debug|sandbox)$/.test(a)
    )
      continue
    else if (a.startsWith("-")) return `sed ${a}`
    else if (operands++ === 0 && scripts.length === 0) scripts.push(a)
  }
  const bad = scripts.find((s) => !sedScriptIsInert(s))
  return scripts.length === 0
    ? "sed without a script"
    : bad === undefined
      ? undefined
      : `sed script ${JSON.stringify(bad)}`
}

const awk = (args: ReadonlyArray<string>): string | undefined => {
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!
    if (a === "-v" || a === "-F" || a === "--assign" || a === "--field-separator") i++
    else if (/^-[vF]./.test(a) || /^--(assign|field-separator)=/.test(a)) continue
    else if (a === "--") return args[i + 1] !== undefined && awkProgramIsInert(args[i + 1]!) ? undefined : "awk program"
    else if (a.startsWith("-")) return `awk ${a}`
    else
      return awkProgramIsInert(a)
        ? undefined
        : `awk program ${JSON.stringify(a)} (it may run a command or write a file)`
  }
  return "awk without a program"
}

/** `git branch` only lists: every option is a listing one, and names appear only with a listing option. */
const BRANCH_LISTING =
  /^(-[arvl]+|-vv|--(all|remotes|verbose|list|show-current|color|no-color|column|no-column|ignore-case|omit-empty)|--(sort|format|color|column|abbrev)=.*|--(merged|no-merged|contains|no-contains|points-at)(=.*)?)$/
const gitBranch = (args: ReadonlyArray<string>): string | undefined => {
  const option = args.find((a) => a.startsWith("-") && !BRANCH_LISTING.test(a))
  if (option !== undefined) return `git branch ${option}`
  const lists = args.some((a) => /^(-[arvl]*l|--list|--(merged|no-merged|contains|no-contains|points-at))/.test(a))
  return lists || args.every((a) => a.startsWith("-")) ? undefined : "git branch with a name (it creates a branch)"
}

/** Options of diff, log and show that write a file or run a program configured for diffs. */
const GIT_DIFF_LONG = ["output", "ext-diff", "textconv", "no-index", "open-files-in-pager"]

const GIT: Readonly<Record<string, Spec>> = {
  status: {},
  diff: { long: GIT_DIFF_LONG },
  log: { long: GIT_DIFF_LONG },
  show: { long: GIT_DIFF_LONG },
  branch: { check: gitBranch },
  "rev-parse": {},
  "ls-files": {}
}

const git = (args: ReadonlyArray<string>): string | undefined => {
  const at = args.findIndex((a) => !a.startsWith("-"))
  // Global options (-c, -C, --exec-path, --git-dir, -p…) can run programs or look elsewhere.
  const global = args.slice(0, at < 0 ? args.length : at).find((a) => a !== "--no-pager")
  if (global !== undefined) return `git ${global}`
  const sub = at < 0 ? undefined : args[at]!
  const spec = sub === undefined ? undefined : GIT[sub]
  if (spec === undefined) return sub === undefined ? "git without a subcommand" : `git ${sub}`
  return check(spec, args.slice(at + 1), `git ${sub}`)
}

const DATE_REFUSED = (args: ReadonlyArray<string>) =>
  args.some((a) => !a.startsWith("-") && !a.startsWith("+")) ? "date with an operand (it sets the clock)" : undefined

/** The list: program → what stops it from being read-only. */
export const READ_ONLY: Readonly<Record<string, Spec>> = {
  ls: {},
  cat: {},
  head: {},
  tail: {},
  wc: {},
  nl: {},
  cut: {},
  tr: {},
  uniq: {
    check: (args) => (args.filter((a) => !a.startsWith("-")).length > 1 ? "uniq with an output file" : undefined)
  },
  sort: { short: "oT", long: ["output", "compress-program", "temporary-directory"] },
  grep: {},
  egrep: {},
  fgrep: {},
  rg: { short: "z", long: ["pre", "pre-glob", "search-zip", "hostname-bin"] },
  find: {
    check: (args) => {
      const refused = args.find((a) => FIND_REFUSED.test(a))
      return refused === undefined ? undefined : `find ${refused}`
    }
  },
  sed: { short: "i", long: ["in-place", "file"], check: sed },
  awk: { check: awk },
  gawk: { check: awk },
  mawk: { check: awk },
  git: { check: git },
  diff: {},
  cmp: {},
  comm: {},
  stat: {},
  file: { short: "C", long: ["compile"] },
  du: {},
  df: {},
  // -R reruns tree in every directory with -o 00Tree.html.
  tree: { short: "oR", long: ["output"] },
  basename: { paths: false },
  dirname: { paths: false },
  realpath: {},
  readlink: {},
  which: { paths: false },
  whoami: { paths: false },
  id: { paths: false },
  uname: { paths: false },
  hostname: { short: "Fb", long: ["file", "boot"], check: noOperands("hostname"), paths: false },
  date: { short: "s", long: ["set"], check: DATE_REFUSED, paths: false },
  jq: {},
  md5sum: {},
  sha1sum: {},
  sha256sum: {},
  sha512sum: {},
  od: {},
  hexdump: {},
  seq: { paths: false },
  echo: { paths: false },
  printf: { paths: false },
  pwd: { paths: false },
  true: { paths: false },
  false: { paths: false },
  test: {},
  "[": {},
  type: { paths: false },
  command: { paths: false }
}

const check = (spec: Spec, args: ReadonlyArray<string>, name: string): string | undefined => {
  const option = refusedOption(spec, args)
  if (option !== undefined) return `${name} ${option}`
  return spec.check?.(args)
}

/**
 * Why a command is not read-only by the list, or undefined when it is. `words` are the
 * command's words after quote removal; the caller has already proven every construct inert.
 */
export const notReadOnly = (words: ReadonlyArray<string>): string | undefined => {
  const name = words[0]
  const spec = name === undefined ? undefined : READ_ONLY[name]
  if (name === undefined || spec === undefined) return `${name ?? "an empty command"} is not on the read-only list`
  const why = check(spec, words.slice(1), name)
  return why === undefined ? undefined : `${why} can write, run or fetch something`
}

/**
 * Why a simple command may not run as read-only, or undefined when it may. Every word must be
 * known (a glob may not start where it could expand to an option), the command must be on the
 * list, and every operand and option value that could name a file must pass `readable` (the
 * caller's check that a path is inside the project and not a secret), as the read tool would.
 */
export const readOnlyConcern = (command: SimpleCommand, readable: (path: string) => boolean): string | undefined => {
  for (let i = 0; i < command.words.length; i++) {
    const word = command.words[i]!
    const shape = command.shapes[i]
    if (shape === "dynamic") return `${word} is only known when it runs`
    if (shape === "pattern" && /^[-*?[{~]/.test(word)) return `${word} may expand to an option or a path elsewhere`
  }
  const why = notReadOnly(command.words)
  if (why !== undefined) return why
  if (READ_ONLY[command.words[0]!]!.paths === false) return undefined
  for (const word of command.words.slice(1)) {
    const value = word.startsWith("-") ? (word.includes("=") ? word.slice(word.indexOf("=") + 1) : "") : word
    const path = value.replace(/[*?[{].*$/s, "")
    if (path !== "" && !readable(path)) return `${word} names a file outside the project or one that may hold secrets`
  }
  return undefined
}
