// biome-ignore-all lint/suspicious/noTemplateCurlyInString: the commands are bash text, which holds ${…}
/**
 * Generated shell commands for the differential test: from a small grammar of bash, from the
 * classes of commands that got past the analyzer before, and by mutating the corpus (quoting,
 * line continuations, control characters, wrappers, nesting). Seeded, so a failure replays.
 */

/** A seeded PRNG (mulberry32): the same seed gives the same commands. */
export const random = (seed: number) => {
  let a = seed >>> 0
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
  const int = (n: number) => Math.floor(next() * n)
  const pick = <A>(xs: ReadonlyArray<A>): A => xs[int(xs.length)]!
  return { next, int, pick }
}
export type Random = ReturnType<typeof random>

/** Programs a command may start with: some allowed by the test's rules or the read-only list, most not. */
const PROGRAMS = [
  "ls",
  "ls -la",
  "cat input.txt",
  "echo hi",
  "grep a input.txt",
  "wc -l",
  "head -n 1",
  "sort",
  "git status",
  "git diff",
  "printf x",
  "find .",
  "xargs",
  "env",
  "touch t",
  "rm -f t",
  "curl x",
  "sh",
  "bash",
  "python3",
  "command",
  "nice",
  "timeout 5",
  "nohup",
  "sed -n p",
  "awk {print}",
  "test -v",
  "read",
  "printf -v PATH",
  "declare",
  "export",
  "let",
  "mapfile",
  "getopts",
  "true"
]

/** Arguments, plain and not: each is one word of bash text. */
const ARGS = [
  "a",
  "'a b'",
  '"a b"',
  "-n",
  "--",
  "input.txt",
  "$x",
  "${x}",
  '"$x"',
  "${x@P}",
  '"${x@P}"',
  "${!x}",
  '"${!x}"',
  "${x:-$(touch t)}",
  "$(touch t)",
  '"$(touch t)"',
  "`touch t`",
  "$'\\x74ouch'",
  "$'touch'",
  "'a[$(touch t)]'",
  '"a[$(touch t)]"',
  "a[1]",
  "*.txt",
  "{touch,t}",
  "~",
  "$((1+2))",
  "$((x))",
  "<(touch t)",
  "'touch t'",
  '"touch t"',
  "-c",
  "-exec",
  "touch",
  "\\;",
  "-o",
  "--output=o",
  "s/a/b/w o",
  "'BEGIN{system(\"touch t\")}'"
]

const OPERATORS = [" ; ", " && ", " || ", " | ", "\n", " & "]
const REDIRECTS = ["", "", "", " 2>&1", " >/dev/null", " < input.txt", " > out", " <<< $(touch t)", " 2>/dev/null"]
const PREFIXES = ["", "", "", "LANG=C ", "x=touch ", "PATH=. ", "x='a[$(touch t)]' ", "LC_ALL[$(touch t)]=1 "]

const simple = (r: Random): string => {
  let s = PREFIXES[r.int(PREFIXES.length)]! + r.pick(PROGRAMS)
  const n = r.int(4)
  for (let i = 0; i < n; i++) s += ` ${r.pick(ARGS)}`
  return s + r.pick(REDIRECTS)
}

/** A command from the grammar: simple commands joined by operators, grouped and nested. */
export const fromGrammar = (r: Random, depth = 0): string => {
  const n = 1 + r.int(3)
  const parts: Array<string> = []
  for (let i = 0; i < n; i++) {
    const k = r.int(10)
    if (depth < 2 && k === 0) parts.push(`( ${fromGrammar(r, depth + 1)} )`)
    else if (depth < 2 && k === 1) parts.push(`{ ${fromGrammar(r, depth + 1)}; }`)
    else if (depth < 2 && k === 2) parts.push(`echo "$(${fromGrammar(r, depth + 1)})"`)
    else if (k === 3)
      parts.push(`cat <<EOF\n${r.pick(["hi", "$(touch t)", "$\\\n(touch t)", "`touch t`", "${x@P}"])}\nEOF\n`)
    else parts.push(simple(r))
  }
  return parts.map((p, i) => (i === 0 ? p : r.pick(OPERATORS) + p)).join("")
}

/** The classes the analyzer once let through, each as the attacker wrote it. */
export const CLASSES: ReadonlyArray<string> = [
  "x='$(touch t)'; echo ${x@P}",
  "x='$(touch t)'; echo \"${x@P}\"",
  "x='a[$(touch t)]'; echo ${!x}",
  "printf -v PATH x; ls",
  "printf -v 'a[$(touch t)]' x",
  "read 'a[$(touch t)]' <<< x",
  "declare 'a[$(touch t)]=1'",
  "typeset 'a[$(touch t)]=1'",
  "local x=1",
  "export PATH=.; ls",
  "test -v 'a[$(touch t)]'",
  "[ -v 'a[$(touch t)]' ]",
  "[[ -v 'a[$(touch t)]' ]]",
  "let 'a[$(touch t)]=1'",
  "(( a[$(touch t)] ))",
  "x='a[$(touch t)]'; (( x ))",
  "mapfile 'a[$(touch t)]' < input.txt",
  "getopts a 'a[$(touch t)]'",
  "echo $\\\n(touch t)",
  'echo "$\\\n(touch t)"',
  "cat <<< $\\\n(touch t)",
  "cat > $\\\n(touch t)",
  "x=$\\\n(touch t) ls",
  "cat <<EOF\n$\\\n(touch t)\nEOF",
  "echo a\v# x ; touch t",
  "echo a\r# x ; touch t",
  "echo a\f# x ; touch t",
  "echo a\\\r\ntouch t",
  "\\\tls",
  "\\ ls",
  "ls # a comment \\\n\\\ntouch t",
  "ls # a comment \\\ntouch t",
  "echo a\\\tb",
  "env bash -c 'touch t'",
  "command bash -c 'touch t'",
  "echo x | xargs sh -c 'touch t'",
  "find . -maxdepth 0 -exec sh -c 'touch t' \\;",
  "find . -maxdepth 0 -exec env touch t \\;",
  "$'touch' t",
  "$'\\x74ouch' t",
  "script -qc 'touch t'",
  "flock f -c 'touch t'",
  "setarch x86_64 touch t",
  "prlimit --nofile=10 touch t",
  "setpriv --reuid=0 touch t",
  "setpriv\n --reuid=0 touch t",
  "x=touch; $x t",
  "python3 -c 'import os'",
  "git diff --output=o",
  "sort -o o input.txt",
  "sed -n 'w o' input.txt",
  "sed 's/a/b/e' input.txt",
  "awk 'BEGIN{system(\"touch t\")}'",
  "awk '{print > \"o\"}' input.txt",
  "rg --pre touch a",
  "find . -delete",
  "find . -fprint o"
]

const WRAPPERS = [
  (c: string) => `env ${c}`,
  (c: string) => `command ${c}`,
  (c: string) => `timeout 5 ${c}`,
  (c: string) => `nice -n 1 ${c}`,
  (c: string) => `nohup ${c}`,
  (c: string) => `bash -c '${c.replaceAll("'", "'\\''")}'`,
  (c: string) => `sh -c "${c.replace(/[\\"$`]/g, "\\$&")}"`,
  (c: string) => `eval '${c.replaceAll("'", "'\\''")}'`,
  (c: string) => `echo $(${c})`,
  (c: string) => `( ${c} )`,
  (c: string) => `{ ${c}; }`,
  (c: string) => `xargs ${c}`
]
const CONTROL = ["\r", "\v", "\f", "\x01", "\x1b", "\u00a0", "\\\n", "\\\r\n", "\t", "\n"]

/** A mutation of a command: a character quoted, a line continuation or control character put in, a wrapper around it. */
export const mutate = (r: Random, command: string): string => {
  const at = r.int(command.length + 1)
  switch (r.int(6)) {
    case 0:
      return command.slice(0, at) + r.pick(CONTROL) + command.slice(at)
    case 1: {
      const ch = command[at]
      if (ch === undefined || !/[A-Za-z]/.test(ch)) return command
      const quoted = r.pick([`'${ch}'`, `"${ch}"`, `\\${ch}`, `$'${ch}'`, `$'\\x${ch.charCodeAt(0).toString(16)}'`])
      return command.slice(0, at) + quoted + command.slice(at + 1)
    }
    case 2:
      return `${command.slice(0, at)}\\\n${command.slice(at)}`
    default: {
      let c = command
      const depth = 1 + r.int(3)
      for (let i = 0; i < depth; i++) c = r.pick(WRAPPERS)(c)
      return c
    }
  }
}
