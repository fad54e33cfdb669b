/**
 * The secret files inside the writable places, found for each sandboxed command so the sandbox
 * can hide them: every regular file with a secret's name (credentials.ts's `isSecretName`), and
 * every other name for the same file — a hard link to a secret, or to a home credential file,
 * under an innocent name. Links are looked for only when one of those secrets has more than one
 * name (its link count), so the usual walk costs one readdir per folder and no stat per file.
 *
 * A link with a secret's name hides the file it leads to, wherever that is. Not walked into:
 * links to folders, `.git` (git's own files, no secret names) and `node_modules` (packages' test
 * fixtures, not the person's keys). A walk stops after WALK_LIMIT entries; `complete` then says
 * what was found is not all (the sandbox refuses to start rather than guess).
 */
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { isSecretName } from "./credentials.ts"

/** How many folder entries one walk may look at. */
export const WALK_LIMIT = 400_000

const SKIPPED = new Set([".git", "node_modules"])

export interface SecretFiles {
  readonly paths: ReadonlyArray<string>
  /** False when a walk hit WALK_LIMIT. */
  readonly complete: boolean
}

const realFile = (p: string): string | undefined => {
  try {
    const real = NodeFs.realpathSync(p)
    return NodeFs.statSync(real).isFile() ? real : undefined
  } catch {
    return undefined
  }
}

const identity = (s: NodeFs.Stats) => `${s.dev}:${s.ino}`

const lstat = (p: string): NodeFs.Stats | undefined => {
  try {
    return NodeFs.lstatSync(p)
  } catch {
    return undefined
  }
}

/**
 * The secret files below `roots` (real paths). `credentialFiles` are files elsewhere (the home
 * credential list's, existing) whose hard links inside the roots are secrets too.
 */
export const secretFilesIn = (
  roots: ReadonlyArray<string>,
  credentialFiles: ReadonlyArray<string> = []
): SecretFiles => {
  const found: Array<string> = []
  const others: Array<string> = []
  let seen = 0
  let complete = true
  const walk = (dir: string) => {
    let entries: Array<NodeFs.Dirent>
    try {
      entries = NodeFs.readdirSync(dir, { withFileTypes: true })
    } catch {
      return // unreadable here, unreadable inside too
    }
    for (const e of entries) {
      if (++seen > WALK_LIMIT) {
        complete = false
        return
      }
      const path = NodePath.join(dir, e.name)
      if (e.isDirectory()) {
        if (!SKIPPED.has(e.name)) walk(path)
      } else if (e.isFile()) {
        if (isSecretName(e.name)) found.push(path)
        else others.push(path)
      } else if (e.isSymbolicLink() && isSecretName(e.name)) {
        // `.env -> ~/secrets/prod.env`: the file it leads to is hidden, wherever it is.
        const target = realFile(path)
        if (target !== undefined) found.push(target)
      }
    }
  }
  for (const root of roots) if (complete) walk(root)

  // Hard links: only where some secret has another name.
  const linked = new Set<string>()
  for (const p of [...found, ...credentialFiles]) {
    const s = lstat(p)
    if (s?.isFile() && s.nlink > 1) linked.add(identity(s))
  }
  if (linked.size > 0) {
    for (const p of others) {
      const s = lstat(p)
      if (s !== undefined && s.nlink > 1 && linked.has(identity(s))) found.push(p)
    }
  }
  return { paths: found, complete }
}

/** The files among the home credential places (a folder's files, one level down): their links are secrets too. */
export const credentialFilesOf = (places: ReadonlyArray<string>): Array<string> =>
  places.flatMap((p) => {
    const s = lstat(p)
    if (s === undefined) return []
    if (s.isFile()) return [p]
    if (!s.isDirectory()) return []
    try {
      return NodeFs.readdirSync(p, { withFileTypes: true })
        .filter((e) => e.isFile())
        .map((e) => NodePath.join(p, e.name))
    } catch {
      return []
    }
  })
