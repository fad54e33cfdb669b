/**
 * A git command that names a secret's path reads it from git's objects: `git show HEAD:.env`,
 * `git cat-file -p HEAD:config/.env.production`, `git log -p -- .env`, `git diff HEAD -- id_rsa`,
 * `git blame .env`, `git grep TOKEN HEAD -- '*.pem'`, `git archive HEAD .env`. Inside the sandbox
 * the file is hidden, but its committed copy is in `.git/objects`, which the sandbox cannot hide
 * (git itself works there). So such a command asks, even sandboxed, as `cat .env` asks without a
 * rule. Outside the sandbox no git command that prints content is on the read-only list: it asks,
 * or runs under a rule the person wrote (`Bash(git show:*)`), as `cat .env` runs under
 * `Bash(cat:*)`.
 *
 * Seen: every word after the subcommand, and each part of it split at `/`, `:` and `)` (so
 * `REV:PATH`, `:0:PATH` and pathspec magic `:(glob)x/.env`), by the secret-name rule
 * (credentials.ts); a glob bash could expand to a secret (the read-only list's test); any glob
 * after `--` (a pathspec git expands itself, `'*.env'`); a word whose value comes from a variable. Not seen, and in docs/permissions.md: a history read that names no
 * path (`git log -p`, `git show HEAD`, `git grep TOKEN HEAD`, `git cat-file -p SHA`).
 */
import { hasSecretName, isSecretName } from "../../sandbox/credentials.ts"
import type { SimpleCommand } from "./analysis.ts"
import { globSafe } from "./read-only.ts"

/** git's global options that take the next word as their value. */
const GLOBAL_WITH_VALUE = new Set([
  "-C",
  "-c",
  "--git-dir",
  "--work-tree",
  "--namespace",
  "--config-env",
  "--exec-path"
])

const GLOB = /[*?[]/

/** Why `cmd` is a git command naming a secret (or a path that could be one); undefined when not. */
export const gitSecretRead = (cmd: SimpleCommand): string | undefined => {
  const program = cmd.words[0]
  if (program === undefined || (program !== "git" && !program.endsWith("/git"))) return undefined
  let i = 1
  while (i < cmd.words.length && cmd.words[i]!.startsWith("-")) i += GLOBAL_WITH_VALUE.has(cmd.words[i]!) ? 2 : 1
  let pathspecs = false
  for (let j = i + 1; j < cmd.words.length; j++) {
    const word = cmd.words[j]!
    if (cmd.shapes[j] === "dynamic") return `\`${word}\` comes from a variable and could name a secret`
    if (word === "--") {
      pathspecs = true
      continue
    }
    if (word.split(/[/:)]/).some((part) => part !== "" && isSecretName(part)))
      return `\`${word}\` names a file that may hold secrets`
    // bash's glob, against the work tree; after `--`, git's own, which crosses folders and dots.
    if (cmd.shapes[j] === "pattern" && !globSafe(word, (p) => !hasSecretName(p)))
      return `\`${word}\` could expand to a file that may hold secrets`
    if (pathspecs && GLOB.test(word)) return `the pathspec \`${word}\` could match a file that may hold secrets`
  }
  return undefined
}
