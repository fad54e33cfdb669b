/**
 * The secret files inside the writable places, found for each sandboxed command so the sandbox
 * can hide them: every regular file with a secret's name (credentials.ts's `isSecretName`), and
 * every other name for the same file — a hard link to a secret, or to a home credential file,
 * under an innocent name. Links are looked for only when one of those secrets has more than one
 * name (its link count), so the usual walk costs one readdir per folder and no stat per file —
 * one lstat per folder for a folder unchanged since the last walk.
 *
 * A link with a secret's name hides the file it leads to, wherever that is. Not walked into:
 * links to folders, `.git` (git's own files, no secret names) and `node_modules` (packages' test
 * fixtures, not the person's keys). A walk stops after WALK_LIMIT entries; `complete` then says
 * what was found is not all (the sandbox refuses to start rather than guess).
 */
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { underBindMount } from "../fs/bind-mounts.ts"
import { processWide } from "../process-wide/process-wide.ts"
import { isControlName } from "./control-paths.ts"
import { isSecretName } from "./credentials.ts"

/** How many folder entries one walk may look at. */
export const WALK_LIMIT = 400_000

const SKIPPED = new Set([".git", "node_modules"])

export interface SecretFiles {
  readonly paths: ReadonlyArray<string>
  /** False when a walk hit WALK_LIMIT. */
  readonly complete: boolean
  /**
   * Every entry with a control path's first name (`.git`, `.vscode`, `freecode.json`: control-paths.ts)
   * in the folders walked, at any depth: the same walk finds them, so the sandbox's guard of
   * nested repositories and its audit after a command cost no walk of their own.
   */
  readonly controls: ReadonlyArray<string>
  /**
   * Folders that could not be listed (a mode without read, `chmod 311 sub`): what is in them can
   * still be reached by name, so the audit looks there for each control path by name.
   */
  readonly unlisted: ReadonlyArray<string>
  /** Every folder walked (the guard watches them for control paths made while a command runs). */
  readonly folders: ReadonlyArray<string>
}

const realFile = (p: string): string | undefined => {
  try {
    const real = NodeFs.realpathSync.native(p)
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

/** One folder's entries that matter, as of its change time (ctime, which no command can set back). */
interface Listing {
  /** Its ctime was over a second old when listed: a change after the listing shows as a new ctime. */
  readonly stable: boolean
  readonly ctime: bigint
  readonly ino: bigint
  readonly count: number
  readonly dirs: ReadonlyArray<string>
  readonly files: ReadonlyArray<string>
  readonly secrets: ReadonlyArray<string>
  readonly secretLinks: ReadonlyArray<string>
  readonly controls: ReadonlyArray<string>
}

/**
 * The last walk's folders, per set of roots: a folder whose ctime and inode are unchanged has
 * the same entries (adding, removing or renaming one changes its ctime), so the next walk costs
 * one lstat a folder instead of a readdir.
 */
const listings = processWide("secret-file listings", () => new Map<string, Map<string, Listing>>())

const list = (dir: string, previous: Map<string, Listing> | undefined): Listing | undefined => {
  let st: NodeFs.BigIntStats
  try {
    st = NodeFs.lstatSync(dir, { bigint: true })
  } catch {
    return undefined
  }
  if (!st.isDirectory()) return undefined
  const cached = previous?.get(dir)
  if (cached?.stable && cached.ctime === st.ctimeNs && cached.ino === st.ino) return cached
  let entries: Array<NodeFs.Dirent>
  try {
    entries = NodeFs.readdirSync(dir, { withFileTypes: true })
  } catch {
    return undefined // unreadable here, unreadable inside too
  }
  const dirs: Array<string> = []
  const files: Array<string> = []
  const secrets: Array<string> = []
  const secretLinks: Array<string> = []
  const controls: Array<string> = []
  for (const e of entries) {
    if (isControlName(e.name)) controls.push(e.name)
    if (e.isDirectory()) {
      if (!SKIPPED.has(e.name)) dirs.push(e.name)
    } else if (e.isFile()) (isSecretName(e.name) ? secrets : files).push(e.name)
    else if (e.isSymbolicLink() && isSecretName(e.name)) secretLinks.push(e.name)
  }
  // File times are coarse (a clock tick): an entry added in the same tick as the listing would
  // leave the ctime as it was, so a folder changed within the last second is listed again.
  const stable = st.ctimeNs < BigInt(Date.now() - 1000) * 1_000_000n
  return { stable, ctime: st.ctimeNs, ino: st.ino, count: entries.length, dirs, files, secrets, secretLinks, controls }
}

/**
 * The secret files below `roots` (real paths). `credentialFiles` are files elsewhere (the home
 * credential list's, existing) whose hard links inside the roots are secrets too.
 */
export const secretFilesIn = (
  roots: ReadonlyArray<string>,
  credentialFiles: ReadonlyArray<string> = []
): SecretFiles => {
  const key = roots.join("\0")
  const previous = listings.get().get(key)
  const visited = new Map<string, Listing>()
  const found: Array<string> = []
  const controls: Array<string> = []
  const unlisted: Array<string> = []
  let seen = 0
  let complete = true
  const walk = (dir: string) => {
    const l = list(dir, previous)
    if (l === undefined) {
      unlisted.push(dir)
      return
    }
    visited.set(dir, l)
    seen += l.count
    if (seen > WALK_LIMIT) {
      complete = false
      return
    }
    for (const name of l.secrets) found.push(NodePath.join(dir, name))
    for (const name of l.controls) controls.push(NodePath.join(dir, name))
    for (const name of l.secretLinks) {
      // `.env -> ~/secrets/prod.env`: the file it leads to is hidden, wherever it is.
      const target = realFile(NodePath.join(dir, name))
      if (target !== undefined) found.push(target)
    }
    for (const name of l.dirs) if (complete) walk(NodePath.join(dir, name))
  }
  for (const root of roots) if (complete) walk(root)
  listings.get().set(key, visited)

  // Hard links: only where some secret has another name.
  const linked = new Set<string>()
  for (const p of [...found, ...credentialFiles]) {
    const s = lstat(p)
    if (s?.isFile() && s.nlink > 1) linked.add(identity(s))
  }
  if (linked.size > 0) {
    for (const [dir, l] of visited) {
      for (const name of l.files) {
        const p = NodePath.join(dir, name)
        const s = lstat(p)
        if (s !== undefined && s.nlink > 1 && linked.has(identity(s))) found.push(p)
      }
    }
  }
  return { paths: found, complete, controls, unlisted, folders: [...visited.keys()] }
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

/** The identities (`dev:ino`) of the secrets the file tools know, per set of roots, briefly kept. */
const twins = processWide(
  "secret twins",
  () => new Map<string, { readonly at: number; readonly byIdentity: ReadonlyMap<string, string> }>()
)
/** A second: enough to serve a search's many linked files with one walk, short against a person adding a secret. */
const TWIN_SET_MS = 1_000

/**
 * The secret file that a file with more than one name (`links` > 1: a hard link) is another
 * name of, found by device and inode: a secret-named file below `roots`, or a file of the home
 * credential list (`credentialFiles`). Undefined when it is none of them, and at once for a file
 * with one name (nothing to look up). The set is the sandbox's own walk (secretFilesIn: cached
 * listings), kept for a second.
 */
export const secretTwinOf = (
  file: { readonly dev: number; readonly ino: number; readonly links: number; readonly mounted?: boolean },
  roots: ReadonlyArray<string>,
  credentialFiles: () => ReadonlyArray<string>
): string | undefined => {
  if (file.links <= 1 && file.mounted !== true) return undefined
  const key = roots.join("\0")
  let set = twins.get().get(key)
  if (set === undefined || Date.now() - set.at > TWIN_SET_MS) {
    const byIdentity = new Map<string, string>()
    // A walk that hit its limit still names what it found; the file tools have no fallback to refuse to.
    for (const p of [...secretFilesIn(roots).paths, ...credentialFiles()]) {
      const s = lstat(p)
      // Every secret, however many names it has now: a link made to it while the set is kept
      // is its twin all the same. Secret names come first: a link found among them keeps the
      // name it is a link to.
      if (s?.isFile() && !byIdentity.has(identity(s))) byIdentity.set(identity(s), p)
    }
    set = { at: Date.now(), byIdentity }
    twins.get().set(key, set)
  }
  return set.byIdentity.get(`${file.dev}:${file.ino}`)
}

/** secretTwinOf for the file at `abs` (one lstat; links are not followed: a secret-named link is caught by name). */
export const secretTwinAt = (
  abs: string,
  roots: ReadonlyArray<string>,
  credentialFiles: () => ReadonlyArray<string>
): string | undefined => {
  const s = lstat(abs)
  if (!s?.isFile()) return undefined
  // A bind mount is another name its link count does not show (src/fs/bind-mounts.ts).
  const mounted = s.nlink <= 1 && underBindMount(abs)
  return secretTwinOf({ dev: s.dev, ino: s.ino, links: s.nlink, mounted }, roots, credentialFiles)
}
