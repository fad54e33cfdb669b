/**
 * A prefix rule allows a program, not the programs it can launch. Per program, the options (and
 * script commands) that make it run another command or write a file other than its own output.
 * Such a command asks even under a rule naming the program (`Bash(sed:*)` does not allow
 * `sed 's/x/y/e'`), and one that runs a command is code a deny rule cannot see into: a deny
 * rule refuses it. docs/permissions.md lists this table.
 */
import { basename } from "./runs.ts"
import { awkProgramRuns, sedCall, sedEffects } from "./scripts.ts"

export interface Launch {
  /** It runs a command, or code, the line does not show as a command. */
  readonly runs?: string
  /** It writes a file other than its own output. */
  readonly writes?: string
}

interface Options {
  /** Short options (letters, matched anywhere in a cluster before a value). */
  readonly short?: string
  /** Long options, by name or any prefix of it (`--compress=x` is `--compress-program=x`). */
  readonly long?: ReadonlyArray<string>
  /** Whole words, or their start (`-oProxyCommand=…`). */
  readonly words?: RegExp
}

interface Spec {
  readonly runs?: Options
  readonly writes?: Options
  /** What the tables cannot say. */
  readonly check?: (args: ReadonlyArray<string>) => Launch | undefined
  /** Subcommands (git): the first operand picks a spec of its own. */
  readonly sub?: Readonly<Record<string, Spec>>
  /** Where the subcommand is, when global options take values (git -C dir). */
  readonly subAt?: (args: ReadonlyArray<string>) => number
}

const optionsOf = (args: ReadonlyArray<string>) => {
  const end = args.indexOf("--")
  return end < 0 ? args : args.slice(0, end)
}

/** The first argument the options name. */
const found = (o: Options | undefined, args: ReadonlyArray<string>): string | undefined =>
  o === undefined
    ? undefined
    : optionsOf(args).find((a) => {
        if (o.words?.test(a)) return true
        if (a.startsWith("--")) {
          // npm reads `--script_shell` as `--script-shell`.
          const name = a.slice(2).split("=")[0]!.replaceAll("_", "-")
          return name.length > 1 && (o.long ?? []).some((l) => l.startsWith(name))
        }
        return a.startsWith("-") && a.length > 1 && [...a.slice(1)].some((c) => (o.short ?? "").includes(c))
      })

const sed = (args: ReadonlyArray<string>): Launch | undefined => {
  const call = sedCall(args)
  if (call.unknown !== undefined) return { runs: `sed ${call.unknown} (an option this check does not know)` }
  if (call.fromFile) return { runs: "sed -f (a script file may run commands with e)" }
  const effects = call.scripts.map(sedEffects)
  if (effects.some((e) => e.runs)) return { runs: "a sed script that runs commands (e, s///e) or is not understood" }
  if (effects.some((e) => e.writes)) return { writes: "a sed script that writes files (w, W, s///w)" }
  return undefined
}

const awk = (args: ReadonlyArray<string>): Launch | undefined => {
  const opt = args.find((a) => /^-(f|-file|-exec|E|i|-include|l|-load)/.test(a))
  if (opt !== undefined) return { runs: `awk ${opt} (a program file or extension this check does not read)` }
  // Every word, options' values too (`--source=…`, `-e …`).
  return args.some(awkProgramRuns)
    ? { runs: "an awk program that runs commands (system, |), loads code (@load) or connects (/inet)" }
    : undefined
}

const SQLITE_DOT = /(^|[\n;])\s*\.(shell|system|output|once|excel|import|load|save|backup|restore|open|cd|read|clone)/
const SQLITE_SQL = /load_extension|writefile|\bedit\s*\(|\battach\b|vacuum\s+into/i
const sqlite = (args: ReadonlyArray<string>): Launch | undefined => {
  const option = args.find((a) => /^--?(cmd|init)$/.test(a))
  if (option !== undefined) return { runs: `sqlite3 ${option} (commands, dot-commands included)` }
  const dot = args.find((a) => SQLITE_DOT.test(a) || SQLITE_SQL.test(a))
  if (dot !== undefined)
    return { runs: `sqlite3 ${JSON.stringify(dot)} (a dot-command or function that runs, loads or writes)` }
  // Without SQL on the line it reads commands, .shell included, from its input.
  return args.filter((a) => !a.startsWith("-")).length < 2
    ? { runs: "sqlite3 reading commands from its input" }
    : undefined
}

const make = (args: ReadonlyArray<string>): Launch | undefined => {
  const stdin = args.findIndex((a, i) => /^(-f|--file|--makefile)$/.test(a) && args[i + 1] === "-")
  if (stdin >= 0 || args.some((a) => /^(-f-|--(file|makefile)=-)$/.test(a)))
    return { runs: "make -f - (a makefile from input)" }
  const opt = args.find((a) => /^(-E|--eval)/.test(a) || (!a.startsWith("-") && a.includes("=")))
  return opt === undefined ? undefined : { runs: `make ${opt} (make code on the line)` }
}

/** Where git's subcommand is: after global options, some of which take a value. */
const gitSubAt = (args: ReadonlyArray<string>): number => {
  let i = 0
  for (; i < args.length && args[i]!.startsWith("-"); i++)
    if (/^(-c|-C|--git-dir|--work-tree|--namespace|--config-env|--super-prefix|--attr-source)$/.test(args[i]!)) i++
  return i
}

const always = (what: string) => (): Launch => ({ runs: what })

/** Program → what makes it launch a command or write elsewhere. */
const LAUNCHES: Readonly<Record<string, Spec>> = {
  sed: { check: sed },
  awk: { check: awk },
  gawk: { check: awk },
  mawk: { check: awk },
  nawk: { check: awk },
  sort: { runs: { long: ["compress-program"] }, writes: { short: "o", long: ["output"] } },
  tar: {
    runs: {
      short: "IF",
      long: [
        "checkpoint-action",
        "use-compress-program",
        "to-command",
        "info-script",
        "new-volume-script",
        "rsh-command",
        "rmt-command",
        "index-file"
      ],
      words: /^(-f|--file=?)?[^-/=][^/=]*:/
    },
    // Old-style options: `tar xIf prog a.tar` is a cluster without the dash.
    check: (args) => (args[0] !== undefined && /^[A-Za-z]*[IF]/.test(args[0]) ? { runs: `tar ${args[0]}` } : undefined)
  },
  git: {
    check: (args) => {
      const global = args.slice(0, gitSubAt(args)).find((a) => /^(-c|--config-env|--exec-path)/.test(a))
      return global === undefined ? undefined : { runs: `git ${global} (configuration that runs commands)` }
    },
    subAt: (args) => gitSubAt(args),
    sub: {
      grep: { runs: { short: "O", long: ["open-files-in-pager"] } },
      difftool: { runs: { short: "xt", long: ["extcmd", "tool"] } },
      mergetool: { runs: { short: "t", long: ["tool"] } },
      rebase: { runs: { short: "x", long: ["exec"] } },
      bisect: { check: (a) => (a[0] === "run" ? { runs: "git bisect run" } : undefined) },
      submodule: { check: (a) => (a.includes("foreach") ? { runs: "git submodule foreach" } : undefined) },
      "filter-branch": { check: always("git filter-branch (runs filters)") },
      fetch: { runs: { long: ["upload-pack"] } },
      pull: { runs: { long: ["upload-pack"] } },
      clone: { runs: { short: "u", long: ["upload-pack", "template"] } },
      "ls-remote": { runs: { long: ["upload-pack"] } },
      push: { runs: { long: ["receive-pack", "exec"] } },
      archive: { runs: { long: ["exec", "remote"] }, writes: { short: "o", long: ["output"] } },
      diff: { runs: { long: ["ext-diff", "textconv"] }, writes: { long: ["output"] } },
      log: { runs: { long: ["ext-diff", "textconv"] }, writes: { long: ["output"] } },
      show: { runs: { long: ["ext-diff", "textconv"] }, writes: { long: ["output"] } },
      "format-patch": { writes: { short: "o", long: ["output-directory"] } }
    }
  },
  sqlite3: { check: sqlite },
  npm: {
    runs: {
      short: "c",
      long: ["prefix", "userconfig", "globalconfig", "call", "script-shell", "node-options", "init-module"]
    }
  },
  npx: { runs: { short: "c", long: ["call", "shell"] } },
  pnpm: { runs: { short: "C", long: ["dir", "config", "shell-emulator"] } },
  yarn: { runs: { long: ["cwd", "use-yarnrc"] } },
  make: { check: make },
  gmake: { check: make },
  less: { check: always("less (its ! command and LESSOPEN run commands)") },
  more: { check: always("more (its ! command runs commands)") },
  most: { check: always("most (it can run commands)") },
  man: { runs: { short: "PH", long: ["pager", "html", "browser", "preprocessor"] } },
  rsync: { runs: { short: "e", long: ["rsh", "rsync-path"] } },
  scp: { runs: { short: "SF", words: /^-o/ } },
  sftp: { runs: { short: "SF", words: /^-o/ } },
  ssh: { runs: { short: "F", words: /^-o/ } },
  zip: { runs: { long: ["unzip-command"], words: /^-TT/ } },
  vim: { runs: { short: "cSu", long: ["cmd"], words: /^\+/ } },
  vi: { runs: { short: "cSu", long: ["cmd"], words: /^\+/ } },
  nvim: { runs: { short: "cSu", long: ["cmd"], words: /^\+/ } },
  view: { runs: { short: "cSu", long: ["cmd"], words: /^\+/ } },
  ex: { runs: { short: "cSu", long: ["cmd"], words: /^\+/ } },
  emacs: { runs: { long: ["eval", "load", "funcall", "execute"], words: /^-(l|f)$/ } },
  gdb: {
    runs: {
      short: "x",
      long: ["command", "eval-command", "init-command", "init-eval-command"],
      words: /^--?(ex|iex|ix)$/
    }
  },
  compgen: { runs: { short: "CF" } },
  complete: { runs: { short: "CF" } },
  mapfile: { runs: { short: "C" } },
  readarray: { runs: { short: "C" } },
  bind: { runs: { short: "x" } },
  fc: { runs: { short: "e" } },
  enable: { runs: { short: "f" } }
}

const judge = (spec: Spec, args: ReadonlyArray<string>, name: string): Launch | undefined => {
  const runs = found(spec.runs, args)
  if (runs !== undefined) return { runs: `${name} ${runs}` }
  const checked = spec.check?.(args)
  if (checked !== undefined) return checked
  if (spec.sub !== undefined) {
    const at = spec.subAt?.(args) ?? args.findIndex((a) => !a.startsWith("-"))
    const sub = at < 0 || at >= args.length ? undefined : spec.sub[args[at]!]
    if (sub !== undefined) {
      const inner = judge(sub, args.slice(at + 1), `${name} ${args[at]}`)
      if (inner !== undefined) return inner
    }
  }
  const writes = found(spec.writes, args)
  return writes === undefined ? undefined : { writes: `${name} ${writes}` }
}

/** What a command launches or writes besides its own work, by the table; undefined when nothing. */
export const launches = (words: ReadonlyArray<string>): Launch | undefined => {
  const name = basename(words[0] ?? "")
  const spec = LAUNCHES[name]
  return spec === undefined ? undefined : judge(spec, words.slice(1), name)
}

/** Whether the table knows this program (by name, whatever its path). */
export const hasLaunchSpec = (program: string): boolean => LAUNCHES[basename(program)] !== undefined
