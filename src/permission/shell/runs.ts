/**
 * What else a simple command runs: the command a wrapper runs (`env`, `sudo`, `xargs`,
 * `find -exec`, `timeout`, …), the text a shell or `eval` parses (`bash -c '…'`), and where
 * the program run cannot be known from the line (an interpreter's `-c`, a shell reading stdin,
 * `source`). Deny rules are matched against all of it; allow rules never vouch for it.
 */
import type { Word } from "./analysis.ts"
import { isHarmlessEnv } from "./env.ts"

/** Builtins and programs that set variables for what runs next. */
const SETS_ENV: ReadonlySet<string> = new Set(["env", "export", "declare", "typeset", "local", "readonly"])

export interface Runs {
  /** Argument lists that run as commands of their own (the caller checks each the same way). */
  readonly commands: ReadonlyArray<ReadonlyArray<Word>>
  /** Text a shell will parse and run (the caller parses it). */
  readonly scripts: ReadonlyArray<string>
  /** Why what this runs cannot be known from the line. */
  readonly opaque: ReadonlyArray<string>
  /** Why a prefix rule cannot vouch for this command, if it cannot. */
  readonly concern: string | undefined
}

const NOTHING: Runs = { commands: [], scripts: [], opaque: [], concern: undefined }

export const basename = (word: string) => word.slice(word.lastIndexOf("/") + 1)

export const SHELLS: ReadonlySet<string> = new Set(
  (
    "sh bash zsh dash ksh ksh93 mksh oksh loksh lksh pdksh fish ash rbash csh tcsh yash posh elvish xonsh nu " +
    "pwsh powershell es rc"
  ).split(" ")
)

/**
 * Programs whose arguments hold a command. Their options differ and are not modelled: every
 * suffix of the arguments is taken as a command it may run, and every argument that reads as
 * shell text (`script -c '…'`, `flock F -c '…'`, `env -S '…'`, `su -c '…'`) as a script.
 * That is too much, never too little, which is the right side for a deny rule.
 */
const WRAPPERS: ReadonlySet<string> = new Set(
  (
    "env command builtin exec nice nohup time timeout xargs sudo doas su runuser pkexec script flock setarch " +
    "linux32 linux64 i386 x86_64 prlimit setpriv setsid chroot nsenter unshare ionice chrt taskset stdbuf " +
    "strace ltrace gdb watch parallel busybox firejail bwrap systemd-run numactl cgexec faketime fakeroot proot " +
    "torsocks proxychains proxychains4 valgrind unbuffer eatmydata sg dbus-run-session xvfb-run catchsegv " +
    "caffeinate tini dumb-init sshpass ssh-agent trickle chpst setuidgid envdir daemonize start-stop-daemon " +
    "rlwrap entr chronic tmux screen dtach abduco sem xterm uvx bunx pnpx"
  ).split(" ")
)

/**
 * Interpreters, with the options that carry no code (`safe`) and those whose next word is a
 * plain value (`valued`). Any other option may hand it code on the line (`-c`, `-e`, `-M`,
 * `--import data:…`, `-m timeit -s …`), and a program read from its input (no script,
 * `-`, `/dev/stdin`) is code the line does not show: either is opaque to a deny rule. A script
 * file named by its path is not read (docs/permissions.md: where the line is).
 */
const INTERPRETERS: ReadonlyArray<{ readonly name: RegExp; readonly safe: RegExp; readonly valued?: RegExp }> = [
  {
    name: /^python[0-9.]*$|^pypy[0-9.]*$/,
    // Not -i: after the script (`/dev/null` will do) it reads code from its input.
    safe: /^(-[bBdEhIOqsSuvVx]+|--(version|help|check-hash-based-pycs=\w+))$/,
    valued: /^-[WX]$/
  },
  { name: /^perl[0-9.]*$/, safe: /^(-[acnpsTtUuWwX]+|-[l0][0-7]*|-i[\w.]*|-I.+|-v|--version|--help)$/ },
  { name: /^ruby[0-9.]*$|^irb$/, safe: /^(-[acdlnpsvwW]+|-I.+|--version|--help)$/ },
  {
    name: /^(node|nodejs|bun|deno|tsx|ts-node)$/,
    safe: /^(--(version|help|test|watch|no-warnings|trace-warnings|enable-source-maps|experimental-strip-types|inspect|inspect-brk|trace-uncaught|trace-deprecation|throw-deprecation|preserve-symlinks)|-v|-h|run|test)$/
  },
  { name: /^php[0-9.]*$/, safe: /^(-[lnqsv]+|--version|--help)$/ },
  { name: /^(lua|luajit)[0-9.]*$/, safe: /^(-[vW]|--version)$/ },
  { name: /^(Rscript|osascript|jshell|groovy|scala|elixir|erl|julia|guile|racket)$/, safe: /^(--version|--help)$/ },
  // emacs runs Lisp from many options, single-dash long forms included (`-eval`, `-l`, `-script`).
  {
    name: /^emacs(-nox)?$/,
    safe: /^(--version|--help|-nw|--no-window-system|-q|--no-init-file|-Q|--quick|--no-site-file|--no-splash)$/
  },
  { name: /^(tclsh|wish|expect)[0-9.]*$/, safe: /^(--version)$/ }
]
/**
 * Programs that run the command in their arguments after a subcommand (`uv run rm x`, `npm exec
 * -- rm x`, `ssh host rm x`). A rule naming the runner (`Bash(uv run:*)`) is the person's choice,
 * so they are no concern for an allow rule; a deny rule sees every suffix of the arguments, as
 * for a wrapper. `""`: right after the program (its options skipped as words).
 */
const RUNNERS: Readonly<Record<string, ReadonlyArray<string>>> = {
  uv: ["run", "tool"],
  poetry: ["run"],
  pipenv: ["run"],
  pdm: ["run"],
  hatch: ["run"],
  rye: ["run"],
  conda: ["run"],
  mamba: ["run"],
  micromamba: ["run"],
  npm: ["exec", "x"],
  pnpm: ["exec", "dlx"],
  yarn: ["exec", "dlx"],
  bun: ["x", "run", "exec"],
  npx: [""],
  bundle: ["exec"],
  rbenv: ["exec"],
  pyenv: ["exec"],
  nodenv: ["exec"],
  asdf: ["exec"],
  mise: ["exec", "x"],
  volta: ["run"],
  direnv: ["exec"],
  devbox: ["run"],
  nix: ["develop", "shell", "run"],
  "nix-shell": [""],
  ssh: [""]
}

const runner = (name: string, args: ReadonlyArray<Word>): Runs | undefined => {
  const subs = RUNNERS[name]
  if (subs === undefined) return undefined
  const at = subs.includes("") ? 0 : args.findIndex((a) => subs.includes(a.value))
  if (at < 0) return undefined
  const rest = args.slice(subs.includes("") ? 0 : at + 1)
  return {
    commands: rest.map((_, i) => rest.slice(i)),
    scripts: rest.filter((a) => a.shape === "literal" && looksLikeScript(a.value)).map((a) => a.value),
    opaque: rest.some((a) => a.shape !== "literal") ? [`${name} is given a command only known when it runs`] : [],
    concern: undefined
  }
}

/**
 * Programs that read commands from their input or a file and can run shell commands from
 * them: ed's and dc's `!`, ex's `:!`, at, batch and crontab (later, with the person's rights),
 * and fc, which runs a command from the history list (`history -s 'rm x'; fc -s` fills and
 * runs it). `crontab -l`, `at -l` and `fc -l` only list.
 */
const READS_COMMANDS: Readonly<Record<string, RegExp | undefined>> = {
  ed: undefined,
  dc: undefined,
  ex: undefined,
  at: /^-[lV]$/,
  batch: undefined,
  crontab: /^-l$/,
  fc: /^-[nr]*l/
}

/** Modules `python -m` runs whose arguments are never code. */
const PYTHON_MODULES = new Set(
  "pytest pip venv unittest json.tool http.server mypy black ruff build twine isort flake8 pylint coverage".split(" ")
)
/** Paths that are the program's own input. */
const STDIN = /^(-|\/dev\/stdin|\/dev\/fd\/\d+|\/proc\/[^/]+\/fd\/\d+)$/

/** Why an interpreter's command line carries code this check cannot read, if it does. */
const interpreterCode = (name: string, args: ReadonlyArray<Word>): string | undefined => {
  const spec = INTERPRETERS.find((i) => i.name.test(name))
  if (spec === undefined) return undefined
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!
    if (a.shape !== "literal") return `${name} is given an argument only known when it runs (${a.text})`
    if (STDIN.test(a.value)) return `${name} reads the code it runs from its input (${a.value})`
    if (!a.value.startsWith("-")) return undefined // a script file by path: not read here
    if (a.value === "-m" && /^python|^pypy/.test(name) && PYTHON_MODULES.has(args[i + 1]?.value ?? "")) return undefined
    if (spec.valued?.test(a.value)) i++
    else if (!spec.safe.test(a.value)) return `${name} ${a.value} runs code this check cannot read`
  }
  return args.some((a) => /^(--version|-V|--help|-h|-v)$/.test(a.value))
    ? undefined
    : `${name} reads the code it runs from its input`
}
const AWK = /^(awk|gawk|mawk|nawk|busybox-awk)$/

const FIND_EXEC = new Set(["-exec", "-execdir", "-ok", "-okdir"])
const FIND_WRITES = new Set(["-delete", "-fprint", "-fprint0", "-fprintf", "-fls"])

/** An argument that reads as a command line rather than a single word. */
const looksLikeScript = (value: string) => /[\s;&|<>()`$]/.test(value)

const shell = (name: string, args: ReadonlyArray<Word>): Runs => {
  let withC = false
  let i = 0
  for (; i < args.length; i++) {
    const a = args[i]!
    if (a.shape !== "literal")
      return {
        ...NOTHING,
        opaque: [`${name} is given an argument only known when it runs (${a.text})`],
        concern: `it runs a new shell (${name})`
      }
    if (a.value === "--" || a.value === "-") {
      i++
      break
    }
    if (/^[-+][oO]$|^--(rcfile|init-file)$/.test(a.value)) i++
    else if (/^-[A-Za-z]+$/.test(a.value)) withC ||= a.value.includes("c")
    else if (!/^(--|\+)/.test(a.value)) break
  }
  // The first operand: the command string with -c, else a script file; none: commands from input.
  const operand = args[i]
  if (withC && operand !== undefined)
    return { ...NOTHING, scripts: [operand.value], concern: `it runs a command string in a new shell (${name} -c)` }
  const opaque =
    operand === undefined || withC
      ? `${name} reads the commands it runs from its input`
      : `${name} runs the script file ${operand.value}, which this check does not read`
  return { ...NOTHING, opaque: [opaque], concern: `it runs a new shell (${name})` }
}

const wrapper = (name: string, args: ReadonlyArray<Word>): Runs => ({
  commands: args.map((_, i) => args.slice(i)),
  scripts: args.filter((a) => a.shape === "literal" && looksLikeScript(a.value)).map((a) => a.value),
  opaque: [],
  concern: `it runs another command through ${name}`
})

const find = (args: ReadonlyArray<Word>): Runs => {
  const commands: Array<ReadonlyArray<Word>> = []
  let concern: string | undefined
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!.value
    if (FIND_EXEC.has(a)) {
      concern ??= `it runs a command for every file found (find ${a})`
      const end = args.findIndex((w, j) => j > i && (w.value === ";" || w.value === "+"))
      commands.push(args.slice(i + 1, end < 0 ? undefined : end))
    } else if (FIND_WRITES.has(a)) concern ??= `it deletes or writes files (find ${a})`
  }
  const dynamic = args.find((a) => a.shape === "dynamic")
  const opaque = dynamic === undefined ? [] : [`find is given an argument only known when it runs (${dynamic.text})`]
  return { commands, scripts: [], opaque, concern }
}

/** What running `words` (a literal program name first) runs besides the program itself. */
export const runsOf = (words: ReadonlyArray<Word>): Runs => {
  const name = basename(words[0]?.value ?? "")
  const args = words.slice(1)
  const plain = args.every((a) => a.shape === "literal")
  if (SHELLS.has(name)) return shell(name, args)
  if (name in READS_COMMANDS) {
    const only = READS_COMMANDS[name]
    if (only === undefined || !args.some((a) => only.test(a.value)))
      return { ...NOTHING, opaque: [`${name} runs commands it reads from its input, a file or the history list`] }
  }
  const ran = runner(name, args)
  if (ran !== undefined) return ran
  if (name === "command" && args[0] !== undefined && /^-[vV]$/.test(args[0].value)) return NOTHING
  const wrapped = WRAPPERS.has(name) ? wrapper(name, args) : NOTHING
  if (WRAPPERS.has(name) && name !== "env") return wrapped
  if (name === "find") return find(args)
  if (name === "eval")
    return plain
      ? { ...NOTHING, scripts: [args.map((a) => a.value).join(" ")], concern: "it runs text as a command (eval)" }
      : {
          ...NOTHING,
          opaque: ["eval is given text only known when it runs"],
          concern: "it runs text as a command (eval)"
        }
  if (name === "source" || name === ".")
    return {
      ...NOTHING,
      opaque: [`${name} runs a file's commands in this shell`],
      concern: `it runs text as a command (${name})`
    }
  if (name === "trap" || name === "alias") {
    const texts = args
      .filter((a) => !a.value.startsWith("-"))
      .map((a) => (name === "alias" ? a.value.slice(a.value.indexOf("=") + 1) : a.value))
    return {
      ...NOTHING,
      scripts: plain ? texts : [],
      opaque: plain ? [] : [`${name} is given text only known when it runs`],
      concern: `it runs text as a command (${name})`
    }
  }
  if (AWK.test(name)) {
    const code = args.find((a) => a.shape !== "literal" || /system|\||getline|@|ENVIRON/.test(a.value))
    return code === undefined ? NOTHING : { ...NOTHING, opaque: [`${name}'s program can run commands (${code.text})`] }
  }
  const code = interpreterCode(name, args)
  if (code !== undefined) return { ...NOTHING, opaque: [code] }
  if (SETS_ENV.has(name)) {
    const set = args.find((a) => {
      const m = /^([A-Za-z_][A-Za-z0-9_]*)\+?=/.exec(a.value)
      return a.shape !== "literal" || (m !== null && !isHarmlessEnv(m[1]!))
    })
    if (set !== undefined)
      return { ...wrapped, opaque: [`${name} ${set.text} sets a variable that can make a program run other code`] }
  }
  return wrapped
}

/** Options of `timeout` that take a value. */
const TIMEOUT_VALUE_OPTIONS = new Set(["-s", "--signal", "-k", "--kill-after"])

/**
 * Peels wrappers that only change how long or how nicely a command runs (`time`, `nohup`,
 * `nice`, `timeout`), so `timeout 60 npm test` is checked as `npm test`.
 */
export const stripWrappers = (words: ReadonlyArray<Word>): ReadonlyArray<Word> => {
  let rest = words
  for (let guard = 0; guard < 8 && rest.length > 1 && rest.every((w) => w.shape === "literal"); guard++) {
    const name = rest[0]!.value
    let i = 1
    if (name === "time") {
      while (i < rest.length && rest[i]!.value === "-p") i++
    } else if (name === "nohup") {
      // nothing to skip
    } else if (name === "nice") {
      while (i < rest.length && rest[i]!.value.startsWith("-")) i += rest[i]!.value === "-n" ? 2 : 1
    } else if (name === "timeout") {
      while (i < rest.length && rest[i]!.value.startsWith("-")) i += TIMEOUT_VALUE_OPTIONS.has(rest[i]!.value) ? 2 : 1
      i++ // the duration
    } else break
    if (i >= rest.length) break
    rest = rest.slice(i)
  }
  return rest
}
