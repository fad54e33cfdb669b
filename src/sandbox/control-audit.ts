/**
 * The audit of control paths after a sandboxed command (and, for one that keeps running, every
 * second): a control path that appeared in the writable roots while it ran — a new `sub/.git`
 * with hooks, a `sub/.vscode/tasks.json`, a `.git/commondir` pointing at a folder it filled — is
 * moved aside into the state folder and named in the result. These are the ones the sandbox
 * cannot hold with a mount: below any folder at any depth (a placeholder is an entry left on the
 * host, and one per folder is no option), or one an empty placeholder would break (git refuses
 * an empty `commondir`). What existed when the command started is bound read-only instead
 * (guarded.ts); one of those replaced meanwhile is named too (control-guard.ts stops the command).
 *
 * The places looked at come from the secret-file walk (secret-files.ts `controls`), which visits
 * every folder anyway, so the audit is that walk again (one lstat per unchanged folder) plus an
 * lstat per control path of each folder that holds one.
 */
import { randomBytes } from "node:crypto"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { CONTROL_PATHS } from "./control-paths.ts"
import { nestedBases } from "./guarded.ts"

/** Existing control paths and what each is (device and inode), by real path. */
export type ControlState = ReadonlyMap<string, string>

const identity = (p: string): string | undefined => {
  const s = NodeFs.lstatSync(p, { throwIfNoEntry: false })
  return s === undefined ? undefined : `${s.dev}:${s.ino}`
}

/**
 * The control paths that exist below `roots`: every CONTROL_PATHS entry of each root and of each
 * folder holding one (`controls`: the walk's finds), and the finds themselves (another case, `.VSCODE`).
 */
export const controlState = (
  roots: ReadonlyArray<string>,
  controls: ReadonlyArray<string>,
  unlisted: ReadonlyArray<string> = []
): ControlState => {
  const state = new Map<string, string>()
  // A folder that cannot be listed may still hold a control path reached by name: looked for by name.
  for (const base of [...roots, ...nestedBases(roots, controls), ...unlisted]) {
    for (const c of CONTROL_PATHS) {
      const p = NodePath.join(base, c.path)
      const id = identity(p)
      if (id !== undefined) state.set(p, id)
    }
  }
  for (const p of controls) {
    const id = identity(p)
    if (id !== undefined) state.set(p, id)
  }
  return state
}

export interface ControlChanges {
  /** Absent when the command started, present now (outermost only: a new `sub/.git`, not its hooks too). */
  readonly made: ReadonlyArray<string>
  /** Present at the start and now another entry, or gone: replaced or removed from outside (inside they are read-only). */
  readonly replaced: ReadonlyArray<string>
}

/** What changed between `before` and `after`; `skip` are the sandbox's own placeholders. */
export const controlChanges = (
  before: ControlState,
  after: ControlState,
  skip: ReadonlySet<string>
): ControlChanges => {
  const made: Array<string> = []
  for (const p of [...after.keys()].sort((a, b) => a.length - b.length)) {
    if (before.has(p) || skip.has(p)) continue
    if (made.some((m) => p.startsWith(`${m}/`))) continue
    made.push(p)
  }
  const replaced = [...before].filter(([p, id]) => after.get(p) !== id && !skip.has(p)).map(([p]) => p)
  return { made, replaced }
}

/**
 * Moves `path` (below `root`) into `dir` (the state folder's quarantine), keeping its path
 * relative to the root; answers where it went, or undefined when it could not be moved (gone
 * already, or reached through a link that appeared meanwhile: a folder on the way must still be
 * the real one, so a swapped link cannot send the move to another place).
 */
export const moveAside = (path: string, root: string, dir: string): string | undefined => {
  try {
    const parent = NodePath.dirname(path)
    if (NodeFs.realpathSync.native(parent) !== parent) return undefined
    // Below the root: its path from there; another writable root's (allowWrite): its whole path.
    const fromRoot = NodePath.relative(root, path)
    const kept = fromRoot.startsWith("..") || NodePath.isAbsolute(fromRoot) ? path.slice(1) : fromRoot
    const stamp = `${new Date().toISOString().replace(/[:.]/g, "-")}-${randomBytes(3).toString("hex")}`
    const to = NodePath.join(dir, stamp, kept)
    NodeFs.mkdirSync(NodePath.dirname(to), { recursive: true, mode: 0o700 })
    try {
      NodeFs.renameSync(path, to)
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "EXDEV") throw e
      // The state folder is on another file system: copied (links as links), then removed.
      NodeFs.cpSync(path, to, { recursive: true, verbatimSymlinks: true, errorOnExist: true })
      NodeFs.rmSync(path, { recursive: true, force: true })
    }
    return to
  } catch {
    return undefined
  }
}
