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

/**
 * sqlite3 runs a dot-command named by any prefix of its name (`.sh` is `.shell`), so a dot-command
 * is plain only when every name it can be a prefix of is one of these, which print or set output.
 */
const SQLITE_PLAIN = (
  "bail changes databases dbinfo dump echo eqp exit explain fullschema headers help indexes indices limit lint " +
  "mode nullvalue print prompt quit scanstats schema separator show stats tables timeout timer version vfsinfo " +
  "vfslist vfsname width"
).split(" ")
/** Every dot-command sqlite3 3.40 knows (`.help`), plain or not. */
const SQLITE_ALL = [
  ...SQLITE_PLAIN,
  ..."archive auth backup binary cd check clone connection dbconfig excel expert filectrl import imposter load log".split(
    " "
  ),
  ..."nonce once open output parameter progress read recover restore save selftest session sha3sum shell".split(" "),
  ..."system testcase testctrl trace".split(" ")
]
const sqliteDotPlain = (name: string) =>
  name.length > 0 && SQLITE_ALL.filter((n) => n.startsWith(name.toLowerCase())).every((n) => SQLITE_PLAIN.includes(n))
const SQLITE_DOT = /(?:^|[\n;])\s*\.([A-Za-z0-9_]*)/g
const SQLITE_SQL = /load_extension|writefile|\bedit\s*\(|\battach\b|vacuum\s+into/i
const sqlite = (args: ReadonlyArray<string>): Launch | undefined => {
  const option = args.find((a) => /^--?(cmd|init|A|archive)/.test(a))
  if (option !== undefined) return { runs: `sqlite3 ${option} (commands, dot-commands included)` }
  const dot = args.find((a) => [...a.matchAll(SQLITE_DOT)].some((m) => !sqliteDotPlain(m[1]!)) || SQLITE_SQL.test(a))
  if (dot !== undefined)
    return { runs: `sqlite3 ${JSON.stringify(dot)} (a dot-command or function that runs, loads or writes)` }
  // Without SQL on the line it reads commands, .shell included, from its input.
  return args.filter((a) => !a.startsWith("-")).length < 2
    ? { runs: "sqlite3 reading commands from its input" }
    : undefined
}

/** A file that is the program's own input: what it reads there is on no line this check sees. */
const INPUT = /^(-|\/dev\/(stdin|fd\/\d+)|\/proc\/[^/]+\/fd\/\d+)$/

const make = (args: ReadonlyArray<string>): Launch | undefined => {
  const stdin = args.findIndex((a, i) => /^(-f|--file|--makefile)$/.test(a) && INPUT.test(args[i + 1] ?? ""))
  const attached = args.some((a) => {
    const m = /^(?:-f|--(?:file|makefile)=)(.+)$/.exec(a)
    return m !== null && INPUT.test(m[1]!)
  })
  if (stdin >= 0 || attached) return { runs: "make -f - (a makefile from input)" }
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

/** gdb reads long options with one dash or two, `=` or not, by any unambiguous prefix (getopt_long_only). */
const GDB_RUNS = ["ex", "iex", "ix", "x", "command", "eval-command", "init-command", "init-eval-command"]
const gdbRuns = (args: ReadonlyArray<string>): Launch | undefined => {
  const found = optionsOf(args).find((a) => {
    const name = /^--?([^=]+)/.exec(a)?.[1]
    return name !== undefined && (name === "x" || (name.length > 1 && GDB_RUNS.some((n) => n.startsWith(name))))
  })
  return found === undefined ? undefined : { runs: `gdb ${found} (gdb and shell commands)` }
}

/**
 * A database client's own commands run a shell (`\\! cmd` in psql and mysql, mysql's `system`,
 * psql's `\\o |cmd` and `COPY … PROGRAM`); with no command on the line it reads them from its input.
 */
const databaseClient =
  (name: string, command: RegExp, lists: RegExp) =>
  (args: ReadonlyArray<string>): Launch | undefined => {
    const shell = args.find((a) => /\\!|\\o\s*\||\\g\s*\||\bprogram\b|^\s*system\s/im.test(a))
    if (shell !== undefined) return { runs: `${name} ${JSON.stringify(shell)} (a shell command)` }
    return args.some((a) => command.test(a) || lists.test(a))
      ? undefined
      : { runs: `${name} reading commands from its input (\\! runs a shell)` }
  }

/** socat's EXEC: and SYSTEM: addresses run a command. */
const socat = (args: ReadonlyArray<string>): Launch | undefined => {
  const address = args.find((a) => /(^|!!|,)\s*(exec|system)\s*:/i.test(a))
  return address === undefined ? undefined : { runs: `socat ${address}` }
}

/** The diff options every git command that shows a diff takes. */
const DIFF_RUNS: Options = { long: ["ext-diff", "textconv"] }
const DIFF_WRITES: Options = { long: ["output"] }

/** git config reading (`--get`, `--list`, `get`, `list`, …) is plain; anything else may set a key. */
const gitConfigWrites = (args: ReadonlyArray<string>): Launch | undefined => {
  const reads = args.some((a) =>
    /^(--(get|get-all|get-regexp|get-urlmatch|get-color|get-colorbool|list|show-origin|show-scope|name-only)|-l|get|list)$/.test(
      a
    )
  )
  const operands = args.filter((a) => !a.startsWith("-"))
  const edits = args.some((a) => /^(-e|--edit|edit)$/.test(a))
  return !edits && (reads || operands.length < 2)
    ? undefined
    : { writes: "git config (it sets a key in git's config, which names programs git runs)" }
}

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
    // -P keeps an archive's absolute names: extracting writes wherever they point.
    writes: { short: "P", long: ["absolute-names", "volno-file"] },
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
      grep: { runs: { short: "O", long: ["open-files-in-pager", "textconv"] } },
      difftool: { runs: { short: "xt", long: ["extcmd", "tool"] } },
      mergetool: { runs: { short: "t", long: ["tool"] } },
      rebase: { runs: { short: "x", long: ["exec"] } },
      bisect: { check: (a) => (a[0] === "run" ? { runs: "git bisect run" } : undefined) },
      submodule: { check: (a) => (a.includes("foreach") ? { runs: "git submodule foreach" } : undefined) },
      "filter-branch": { check: always("git filter-branch (runs filters)") },
      fetch: { runs: { long: ["upload-pack"] } },
      pull: { runs: { long: ["upload-pack"] } },
      // clone -c sets config in the new repository before its checkout: core.hooksPath, core.fsmonitor.
      clone: { runs: { short: "uc", long: ["upload-pack", "template", "config"] } },
      "ls-remote": { runs: { long: ["upload-pack"] } },
      push: { runs: { long: ["receive-pack", "exec"] } },
      archive: { runs: { long: ["exec", "remote"] }, writes: { short: "o", long: ["output"] } },
      diff: { runs: DIFF_RUNS, writes: DIFF_WRITES },
      log: { runs: DIFF_RUNS, writes: DIFF_WRITES },
      show: { runs: DIFF_RUNS, writes: DIFF_WRITES },
      "format-patch": { runs: DIFF_RUNS, writes: { short: "o", long: ["output-directory", "output"] } },
      "diff-tree": { runs: DIFF_RUNS, writes: DIFF_WRITES },
      "diff-files": { runs: DIFF_RUNS, writes: DIFF_WRITES },
      "diff-index": { runs: DIFF_RUNS, writes: DIFF_WRITES },
      whatchanged: { runs: DIFF_RUNS, writes: DIFF_WRITES },
      "range-diff": { runs: DIFF_RUNS, writes: DIFF_WRITES },
      stash: { runs: DIFF_RUNS, writes: DIFF_WRITES },
      reflog: { runs: DIFF_RUNS, writes: DIFF_WRITES },
      "send-email": { runs: { long: ["sendmail-cmd", "smtp-server", "to-cmd", "cc-cmd", "header-cmd"] } },
      instaweb: { runs: { short: "db", long: ["httpd", "browser"] } },
      daemon: { runs: { long: ["access-hook"] } },
      apply: { writes: { long: ["unsafe-paths", "directory"] } },
      // Setting a key writes .git/config, which names programs git runs later (core.fsmonitor,
      // core.hooksPath, aliases); only reading it is plain.
      config: { check: gitConfigWrites }
    }
  },
  sqlite3: { check: sqlite },
  npm: {
    runs: {
      short: "cC",
      long: [
        "prefix",
        "userconfig",
        "globalconfig",
        "call",
        "script-shell",
        "shell",
        "node-options",
        "init-module",
        "git",
        "node-gyp",
        "editor",
        "browser",
        "viewer"
      ]
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
  man: { runs: { short: "PHC", long: ["pager", "html", "browser", "preprocessor", "config-file"] } },
  rsync: { runs: { short: "e", long: ["rsh", "rsync-path"] } },
  scp: { runs: { short: "SF", words: /^-o/ } },
  sftp: { runs: { short: "SF", words: /^-o/ } },
  ssh: { runs: { short: "F", words: /^-o/ } },
  zip: { runs: { long: ["unzip-command"], words: /^-TT/ } },
  vim: { runs: { short: "cSuseE", long: ["cmd"], words: /^\+/ } },
  vi: { runs: { short: "cSuseE", long: ["cmd"], words: /^\+/ } },
  nvim: { runs: { short: "cSuseE", long: ["cmd"], words: /^\+/ } },
  view: { runs: { short: "cSuseE", long: ["cmd"], words: /^\+/ } },
  ex: { runs: { short: "cSuseE", long: ["cmd"], words: /^\+/ } },
  vimdiff: { runs: { short: "cSuseE", long: ["cmd"], words: /^\+/ } },
  gvim: { runs: { short: "cSuseE", long: ["cmd"], words: /^\+/ } },
  ed: { check: always("ed (its ! command runs a shell)") },
  psql: {
    check: databaseClient("psql", /^(-c.*|--command(=.*)?|-f.*|--file(=.*)?)$/, /^(-l|--list|-V|--version|--help)$/)
  },
  mysql: { check: databaseClient("mysql", /^(-e.*|--execute(=.*)?)$/, /^(-V|--version|--help)$/) },
  mariadb: { check: databaseClient("mariadb", /^(-e.*|--execute(=.*)?)$/, /^(-V|--version|--help)$/) },
  socat: { check: socat },
  nc: { runs: { short: "ec", long: ["exec", "sh-exec", "lua-exec"] } },
  ncat: { runs: { short: "ec", long: ["exec", "sh-exec", "lua-exec"] } },
  netcat: { runs: { short: "ec", long: ["exec", "sh-exec", "lua-exec"] } },
  dc: { check: always("dc (its ! command runs a shell)") },
  // emacs takes its long options with one dash too (`-eval`, `-load`, `-script`).
  emacs: { runs: { words: /^--?[elfxsELFXS]/ } },
  emacsclient: { runs: { words: /^--?[eE]/ } },
  gdb: { check: (args) => gdbRuns(args) },
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
