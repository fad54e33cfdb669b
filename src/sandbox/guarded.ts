/**
 * What stays read-only inside a writable place: its control paths (control-paths.ts: git's hooks
 * and config, this project's configuration, editor and agent settings) and the places that are
 * never writable from inside (the state folder with the session database, approvals and trust
 * records; the person's own configuration folder).
 *
 * A read-only bind alone can be swapped out: rename `.git` away, make a new one, write its
 * config. So every existing folder on the way from a writable root to a control path is bound
 * onto itself too (`pinned`): a mount point cannot be renamed, removed or replaced (EBUSY), and
 * what is below it keeps its own read-only binds. A missing control path inside such a folder
 * (`.git/hooks` or `.git/info/attributes` not there yet) gets an empty read-only placeholder;
 * bubblewrap creates it, empty, on the host, which git reads as nothing. A missing one directly
 * in a writable root (a new `freecode.json`, `.mcp.json`, `.git`) is held by an empty folder made
 * for the command's life (placeholders.ts): `held` names them, and they are read-only whole.
 */
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { CONTROL_PATHS } from "./control-paths.ts"

export interface GuardedPlaces {
  /** Existing folders bound onto themselves (writable, but not renamable or removable). */
  readonly pinned: ReadonlyArray<string>
  /** Existing control paths and never-writable places below a writable root: read-only. */
  readonly readOnly: ReadonlyArray<string>
  /** Missing control paths inside a pinned folder: an empty read-only placeholder. */
  readonly placeholders: ReadonlyArray<{ readonly path: string; readonly directory: boolean }>
  /** Every control path below a writable root, existing or not: Seatbelt refuses writing them by path. */
  readonly all: ReadonlyArray<string>
  /** The folders on the way to them (`.git`, `.git/info`), existing or not: Seatbelt refuses renaming them. */
  readonly parents: ReadonlyArray<string>
}

const lstat = (p: string): NodeFs.Stats | undefined => {
  try {
    return NodeFs.lstatSync(p)
  } catch {
    return undefined
  }
}

const real = (p: string): string | undefined => {
  try {
    // realpath(3) in one call, not node's walk of an lstat per folder; a missing path without an exception.
    return NodeFs.lstatSync(p, { throwIfNoEntry: false }) === undefined ? undefined : NodeFs.realpathSync.native(p)
  } catch {
    return undefined
  }
}

/**
 * Missing control paths an empty placeholder would break: git refuses a repository whose
 * `commondir` is empty, and an empty `rebase-merge` or `rebase-apply` is a rebase in progress to
 * it (`worktrees`: an entry left in every repository for nothing). bubblewrap cannot hold these
 * (docs/sandbox.md): one a command makes is the audit's (control-audit.ts); Seatbelt can.
 */
const NO_PLACEHOLDER = new Set([".git/commondir", ".git/rebase-merge", ".git/rebase-apply", ".git/worktrees"])

/** The folders below a root that hold a control path of their own (`sub` for `sub/.git`). */
export const nestedBases = (roots: ReadonlyArray<string>, controls: ReadonlyArray<string>): Array<string> => {
  const rootSet = new Set(roots)
  return [...new Set(controls.map((c) => NodePath.dirname(c)))].filter((d) => !rootSet.has(d))
}

const inside = (dir: string, p: string) => p === dir || p.startsWith(dir === "/" ? "/" : `${dir}/`)

/**
 * The guarded places of `roots` (writable real paths); `never` are never writable from inside.
 * `nested` are folders below a root that hold control paths of their own (`sub` with `sub/.git`
 * or `sub/.vscode`, found by the secret-file walk): what exists there is guarded the same way,
 * but nothing missing is held — a placeholder is an entry left on the host, and there could be
 * hundreds of such folders; a control path made there is the audit's (control-audit.ts).
 */
export const guardedPlaces = (
  roots: ReadonlyArray<string>,
  never: ReadonlyArray<string>,
  held: ReadonlyArray<string> = [],
  nested: ReadonlyArray<string> = []
): GuardedPlaces => {
  const placeholderOf = new Set(held)
  const pinned = new Set<string>()
  const readOnly = new Set<string>()
  const placeholders = new Map<string, boolean>()
  const all = new Set<string>()
  const parents = new Set<string>()
  const bases = [...roots.map((base) => ({ base, hold: true })), ...nested.map((base) => ({ base, hold: false }))]
  for (const { base: root, hold } of bases) {
    for (const c of CONTROL_PATHS) {
      all.add(NodePath.join(root, c.path))
      const parts = c.path.split("/")
      for (let i = 1; i < parts.length; i++) parents.add(NodePath.join(root, ...parts.slice(0, i)))
      let at = root
      for (let i = 0; i < parts.length; i++) {
        const next = NodePath.join(at, parts[i]!)
        const last = i === parts.length - 1
        const s = lstat(next)
        if (s === undefined) {
          // Missing: held here inside a pinned folder; at the root itself, placeholders.ts made it (held).
          if (hold && at !== root && !(last && NO_PLACEHOLDER.has(c.path)))
            placeholders.set(next, last ? c.directory : true)
          break
        }
        if (last || !s.isDirectory() || placeholderOf.has(next)) {
          // The control path itself, a file or link where a folder leads to it (`.git` as a
          // worktree's `gitdir:` file), or a placeholder: read-only where it really is.
          const r = s.isSymbolicLink() ? real(next) : next
          if (r !== undefined && roots.some((w) => inside(w, r))) readOnly.add(r)
          break
        }
        pinned.add(next)
        at = next
      }
    }
  }
  for (const n of never) {
    const r = real(n)
    if (r === undefined) continue
    // Inside a writable root: read-only there. A writable root inside it: that root read-only.
    if (roots.some((root) => inside(root, r))) readOnly.add(r)
    for (const root of roots) if (inside(r, root)) readOnly.add(root)
  }
  const byDepth = (a: string, b: string) => a.length - b.length
  return {
    pinned: [...pinned].sort(byDepth),
    readOnly: [...readOnly].sort(byDepth),
    placeholders: [...placeholders].map(([path, directory]) => ({ path, directory })),
    all: [...all],
    parents: [...parents]
  }
}
