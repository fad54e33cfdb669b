/**
 * Credential and history files: where a person's keys, tokens and typed commands live. Reading
 * one asks (read, grep, glob's contents), and inside the sandbox they are not there at all. The
 * list is the one place that names them; `permissions.credentialFiles` adds to it (docs/permissions.md).
 */
import * as NodePath from "node:path"

/** Below the home directory: a folder hides everything in it, a file itself. */
export const HOME_CREDENTIALS: ReadonlyArray<string> = [
  ".ssh",
  ".aws/credentials",
  ".aws/config",
  ".config/gh/hosts.yml",
  ".config/gcloud",
  ".azure",
  ".kube/config",
  ".docker/config.json",
  ".netrc",
  ".git-credentials",
  ".npmrc",
  ".pypirc",
  ".gnupg",
  ".password-store",
  ".local/share/keyrings",
  ".bash_history",
  ".zsh_history",
  ".sh_history",
  ".history",
  ".python_history",
  ".node_repl_history",
  ".psql_history",
  ".mysql_history",
  ".sqlite_history",
  ".lesshst",
  ".local/share/fish/fish_history"
]

/** The concrete paths below `home` the sandbox hides, `extra` (absolute) included. */
export const credentialPaths = (home: string, extra: ReadonlyArray<string> = []): ReadonlyArray<string> => [
  ...HOME_CREDENTIALS.map((p) => NodePath.join(home, p)),
  ...extra
]

/** True when `abs` is one of the credential paths below `home`, or inside one of its folders. */
export const isCredentialPath = (abs: string, home: string, extra: ReadonlyArray<string> = []): boolean => {
  // Most paths a call touches are not below the home directory's dot-folders: one test decides.
  if (
    extra.length === 0 &&
    !(abs.startsWith(home) && abs.charCodeAt(home.length) === 47 && abs.charCodeAt(home.length + 1) === 46)
  )
    return false
  for (const p of credentialPaths(home, extra)) {
    if (abs === p || abs.startsWith(`${p}/`)) return true
  }
  return false
}
