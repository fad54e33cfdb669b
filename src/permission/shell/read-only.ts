/**
 * The built-in list of read-only commands. A command is read-only only when every option and
 * operand has been shown to be: each option is in its program's table (read-only-table.ts, or
 * a parser below for programs with a grammar of their own: find, sed, awk, git, jq), unknown
 * options ask, and every word the program opens as a file is inside the project and not a
 * secret. Which words are files depends on the program and the position: `grep '/usr' f`'s
 * pattern and `sed -n '/x/p'`'s script are text, not paths. A glob asks when it could expand
 * to a secret (`.en?`, `*`, `.{e,}nv`) or an option.
 *
 * Options are read as GNU getopt reads them: short options in clusters (`-rn`), a value
 * attached or in the next word, long options by any unambiguous prefix, nothing after `--`.
 */
import type { SimpleCommand } from "./analysis.ts"
import type { Look } from "./read-only-look.ts"
import { type Kind, type Spec, TABLE } from "./read-only-table.ts"

import { awkProgramIsInert, sedCall, sedEffects } from "./scripts.ts"

/** The words a program opens as files, or why it is not read-only. */
type Parse = (args: ReadonlyArray<string>, look: Look) => ReadonlyArray<string> | string

/** Reads `args` by a table; returns the paths it opens, or why not. */
const byTable =
  (spec: Spec, name: string): Parse =>
  (args, look) => {
    const paths: Array<string> = []
    const operands: Array<string> = []
    const supplied = new Set<string>()
    const value = (kind: Kind, v: string | undefined) => {
      if (kind === "path" && v !== undefined) paths.push(v)
    }
    for (let i = 0; i < args.length; i++) {
      const a = args[i]!
      if (a === "--") {
        operands.push(...args.slice(i + 1))
        break
      }
      if (a === "-" || !a.startsWith("-") || spec.anyOption || (spec.digits && /^-\d+$/.test(a))) {
        if (!a.startsWith("-") || a === "-" || spec.operands === "text") operands.push(a)
        continue
      }
      if (a.startsWith("--")) {
        const [given, attached] = a.slice(2).split(/=(.*)/s, 2) as [string, string | undefined]
        const names = Object.keys(spec.long ?? {})
        const matches = names.includes(given) ? [given] : names.filter((n) => n.startsWith(given))
        if (matches.length !== 1) return `${name} ${a}`
        const long = matches[0]!
        const kind = spec.long![long]!
        supplied.add(long)
        if (kind === "flag" && attached !== undefined) return `${name} ${a}`
        if (kind === "path" || kind === "text") value(kind, attached ?? args[++i])
        if (kind === "two") i += 2
        continue
      }
      for (let j = 1; j < a.length; j++) {
        const c = a[j]!
        if (spec.flags?.includes(c) || (spec.digits && /\d/.test(c))) continue
        if (spec.attached?.includes(c)) break
        const kind = spec.values?.[c]
        if (kind === undefined) return `${name} -${c}`
        supplied.add(c)
        value(kind, j + 1 < a.length ? a.slice(j + 1) : args[++i])
        break
      }
    }
    if (spec.pattern !== undefined && !spec.pattern.some((p) => supplied.has(p))) {
      const text = operands.shift()
      const bad = text === undefined ? undefined : spec.patternCheck?.(text)
      if (bad !== undefined) return bad
    }
    const why = spec.operandCheck?.(operands, look)
    if (why !== undefined) return why
    return spec.operands === "text" ? paths : [...paths, ...operands]
  }

// Not -L or -follow: a link in the project would lead the walk outside it.
const FIND_FLAGS =
  /^(-print|-print0|-prune|-true|-false|-empty|-readable|-writable|-executable|-nouser|-nogroup|-depth|-xdev|-mount|-daystart|-noleaf|-quit|-ls|-not|!|\(|\)|-o|-or|-a|-and|,)$/
const FIND_TEXT =
  /^-(name|iname|path|ipath|wholename|iwholename|regex|iregex|lname|ilname|type|xtype|maxdepth|mindepth|mtime|atime|ctime|mmin|amin|cmin|size|perm|user|group|uid|gid|links|inum|printf|fstype|regextype|used)$/
const FIND_PATH = /^-(newer|anewer|cnewer|samefile|newer[abcmB][abcmB])$/

/** find lists names: its start paths and the files its tests compare with are paths, patterns are text. */
const find: Parse = (args) => {
  const paths: Array<string> = []
  let i = 0
  while (i < args.length && /^-[HP]$/.test(args[i]!)) i++
  while (i < args.length && !/^[-(!),]/.test(args[i]!)) paths.push(args[i++]!)
  for (; i < args.length; i++) {
    const a = args[i]!
    if (FIND_FLAGS.test(a)) continue
    if (FIND_TEXT.test(a)) i++
    else if (FIND_PATH.test(a)) paths.push(args[++i] ?? "")
    else return `find ${a}`
  }
  return paths
}

const sed: Parse = (args) => {
  const call = sedCall(args)
  if (call.unknown !== undefined) return `sed ${call.unknown}`
  if (call.fromFile) return "sed -f (a script this check does not read)"
  if (call.inPlace) return "sed -i (it writes the files it reads)"
  if (call.scripts.length === 0) return "sed without a script"
  const bad = call.scripts.find((s) => {
    const e = sedEffects(s)
    return e.runs || e.writes || e.other
  })
  return bad === undefined ? call.files : `sed script ${JSON.stringify(bad)} (it can run, write or read other files)`
}

const awk: Parse = (args) => {
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!
    if (/^(-[vF]|--(assign|field-separator))$/.test(a)) i++
    else if (/^-[vF]./.test(a) || /^--(assign|field-separator)=/.test(a)) continue
    else if (a.startsWith("-") && a !== "--") return `awk ${a}`
    else {
      const at = a === "--" ? i + 1 : i
      const program = args[at]
      if (program === undefined) return "awk without a program"
      if (!awkProgramIsInert(program))
        return `awk program ${JSON.stringify(program)} (it may run a command, write a file or read one through ARGV or getline)`
      // Operands: files, or `name=value` assignments awk makes between them.
      return args.slice(at + 1).filter((o) => !/^[A-Za-z_][A-Za-z0-9_]*=/.test(o))
    }
  }
  return "awk without a program"
}

/** `git branch` only lists: every option is a listing one, and names appear only with a listing option. */
const BRANCH_LISTING =
  /^(-[arvl]+|-vv|--(all|remotes|verbose|list|show-current|color|no-color|column|no-column|ignore-case|omit-empty)|--(sort|format|color|column|abbrev)=.*|--(merged|no-merged|contains|no-contains|points-at)(=.*)?)$/

/**
 * git: only subcommands that run nothing the repository configures. `status`, `diff`, `log`,
 * `show` and `ls-files` are not here: a repository's own config runs programs for them
 * (`core.fsmonitor` on every index read, textconv and external diff drivers, `log.showSignature`'s
 * gpg), and a command line cannot turn all of those off.
 */
const git: Parse = (args) => {
  const at = args.findIndex((a) => !a.startsWith("-"))
  const global = args.slice(0, at < 0 ? args.length : at).find((a) => a !== "--no-pager")
  if (global !== undefined) return `git ${global}`
  const sub = at < 0 ? undefined : args[at]!
  const rest = args.slice(at + 1)
  if (sub === "rev-parse") return []
  if (sub !== "branch") return sub === undefined ? "git without a subcommand" : `git ${sub}`
  const option = rest.find((a) => a.startsWith("-") && !BRANCH_LISTING.test(a))
  if (option !== undefined) return `git branch ${option}`
  const lists = rest.some((a) => /^(-[arvl]*l|--list|--(merged|no-merged|contains|no-contains|points-at))/.test(a))
  return lists || rest.every((a) => a.startsWith("-")) ? [] : "git branch with a name (it creates a branch)"
}

const JQ: Spec = {
  flags: "nrjacsSCMReh",
  long: {
    ...Object.fromEntries(
      (
        "null-input raw-input raw-output raw-output0 join-output ascii-output compact-output slurp sort-keys " +
        "color-output monochrome-output exit-status tab seq stream stream-errors help version"
      )
        .split(" ")
        .map((n) => [n, "flag" as const])
    ),
    indent: "text",
    arg: "two",
    argjson: "two"
  },
  pattern: [],
  // The filter is text, but `env`/`$ENV` print the environment and `import`/`include` read other files.
  patternCheck: (filter) =>
    /\benv\b|\$ENV|\bimport\b|\binclude\b|\bmodulemeta\b|\binput_filename\b/.test(filter)
      ? `jq filter ${JSON.stringify(filter)} (it reads the environment or other files)`
      : undefined
}
const jq = byTable(JQ, "jq")

const PARSERS: Readonly<Record<string, Parse>> = {
  ...Object.fromEntries(Object.entries(TABLE).map(([name, spec]) => [name, byTable(spec, name)])),
  find,
  sed,
  awk,
  gawk: awk,
  mawk: awk,
  git,
  jq
}

/** The programs on the list (docs/permissions.md). */
export const READ_ONLY: Readonly<Record<string, unknown>> = PARSERS

/** Programs whose operands are never opened: a glob there only prints names. */
const NAMES_ONLY = new Set(Object.entries(TABLE).flatMap(([n, s]) => (s.operands === "text" ? [n] : [])))

/** The paths a command on the list opens, or why it is not read-only. */
const parse = (words: ReadonlyArray<string>, look: Look): ReadonlyArray<string> | string => {
  const name = words[0]
  const p = name === undefined ? undefined : PARSERS[name]
  if (name === undefined || p === undefined) return `${name ?? "an empty command"} is not on the read-only list`
  const r = p(words.slice(1), look)
  return typeof r === "string" ? `${r} is not known to be read-only (it can write, run or read something else)` : r
}

/** Why a command is not read-only by the list (words only, no file checks), or undefined. */
export const notReadOnly = (words: ReadonlyArray<string>): string | undefined => {
  const r = parse(words, { readable: () => true })
  return typeof r === "string" ? r : undefined
}

/** Sample names a glob must not be able to match (checked with the caller's secret rule). */
const SECRET_SAMPLES = [
  "id_rsa",
  "id_ed25519",
  "x.pem",
  "x.key",
  "x.p12",
  "x.pfx",
  "credentials",
  "credentials.json",
  "secrets.json",
  "x.env"
]

const globRegExp = (glob: string) =>
  new RegExp(
    `^${glob
      .replace(/\[!/g, "[^")
      .replace(/[.+^$|\\]/g, "\\$&")
      .replace(/\*/g, "[^/]*")
      .replace(/\?/g, "[^/]")}$`
  )

/**
 * Whether a glob stays away from secrets: no braces or extended patterns, no wildcard in a name
 * that starts with a dot (bash's globs skip dotfiles only when the dot is literal), and a last
 * name that ends in a literal extension no secret has (`src/*.ts`).
 */
export const globSafe = (glob: string, readable: (path: string) => boolean): boolean => {
  if (/[{}()~]/.test(glob)) return false
  const parts = glob.split("/")
  const wild = (p: string) => /[*?[]/.test(p)
  if (parts.some((p) => wild(p) && /^[.[]/.test(p))) return false
  const first = parts.findIndex(wild)
  const dir = parts.slice(0, first).join("/") || "."
  if (!readable(dir)) return false
  const last = parts[parts.length - 1]!
  if (!wild(last)) return readable(`${dir}/x/${last}`)
  const tail = /[^*?\]]*$/.exec(last)![0]
  if (!/^[^/]*\.[\w-]+$/.test(tail) || !readable(`${dir}/x${tail}`)) return false
  const re = globRegExp(last)
  return SECRET_SAMPLES.every((s) => !re.test(s) || readable(`${dir}/${s}`))
}

/** At most this many names are looked at to expand one glob; past it, the command asks. */
const EXPAND_LIMIT = 2000

/**
 * The paths a glob can expand to, as bash expands it (a wildcard never matches a leading dot:
 * globSafe refuses wildcards in names that start with one), or undefined when they cannot be
 * listed. Every `[…]` is read as any one character and quoted wildcards as wildcards: the
 * result may hold more than bash's, never less.
 */
const expand = (glob: string, list: (dir: string) => ReadonlyArray<string> | undefined) => {
  const parts = glob.split("/")
  let at: Array<string> = [parts[0] === "" ? "/" : ""]
  let seen = 0
  for (const part of parts[0] === "" ? parts.slice(1) : parts) {
    if (part === "") continue
    const join = (dir: string, name: string) => (dir === "" ? name : dir === "/" ? `/${name}` : `${dir}/${name}`)
    if (!/[*?[]/.test(part)) {
      at = at.map((d) => join(d, part))
      continue
    }
    // `[]…]` and `[!]…]` hold a `]`: not read here.
    if (/\[[!^]?\]/.test(part)) return undefined
    const re = new RegExp(
      `^${part
        .replace(/\[[^\]]*\]/g, "\u0000")
        .replace(/[.+^$|\\(){}[\]]/g, "\\$&")
        .replace(/\*/g, ".*")
        .replace(/[?\u0000]/g, ".")}$`,
      "s"
    )
    const next: Array<string> = []
    for (const dir of at) {
      const names = list(dir === "" ? "." : dir)
      if (names === undefined) continue
      seen += names.length
      if (seen > EXPAND_LIMIT) return undefined
      for (const n of names) if (!n.startsWith(".") && re.test(n)) next.push(join(dir, n))
    }
    at = next
  }
  return at
}

/**
 * Why a simple command may not run as read-only, or undefined when it may. Every word must be
 * known (a glob may not start where it could expand to an option), the command must be on the
 * list, and every word it opens must pass `look.readable` (inside the project and not a secret,
 * as the file really is), as the read tool would require; a glob must stay away from secrets,
 * by its shape and by what it matches now (a link among its matches is judged as its target).
 */
export const readOnlyConcern = (command: SimpleCommand, look: Look): string | undefined => {
  const names = NAMES_ONLY.has(command.words[0] ?? "")
  for (let i = 0; i < command.words.length; i++) {
    const word = command.words[i]!
    const shape = command.shapes[i]
    if (shape === "dynamic") return `${word} is only known when it runs`
    if (shape === "pattern" && /^[-*?[{~]/.test(word)) return `${word} may expand to an option or a path elsewhere`
    if (shape === "pattern" && !names) {
      if (!globSafe(word, look.readable))
        return `${word} may expand to a file that holds secrets or lies outside the project`
      const matches = look.list === undefined ? undefined : expand(word, look.list)
      if (matches === undefined) return `${word} may expand to more files than this check lists`
      const bad = matches.find((m) => !look.readable(m))
      if (bad !== undefined) return `${word} expands to ${bad}, which is outside the project or may hold secrets`
    }
  }
  const paths = parse(command.words, look)
  if (typeof paths === "string") return paths
  const outside = paths.find((p) => !look.readable(p))
  return outside === undefined ? undefined : `${outside} is outside the project or may hold secrets`
}
