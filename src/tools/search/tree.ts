/**
 * ls's listing from the warm index: what `walkTree` gives for a directory the index holds,
 * built from the directories it keeps — the same levels in the same order, the same entries,
 * the same notes — so that ls prints the same text either way.
 */
import type { Ignore } from "ignore"
import { relativeInside } from "../../path/path.ts"
import { matchesPatterns } from "./ignore.ts"
import type { WalkEntry, WalkedDir, WalkResult } from "./walk.ts"

export interface TreeRequest {
  readonly root: string
  readonly dir: string
  /** As walkTree's options. */
  readonly maxEntries?: number
  readonly extraIgnore?: Ignore
}

/** What the index keeps of a directory (warm-index.ts's Dir). */
export interface HeldDir {
  readonly entries: ReadonlyArray<WalkEntry>
  readonly skipped: ReadonlyArray<string>
  readonly unreadable: boolean
}

/** walkTree's result from the held directories, or undefined when `dir` is not held whole. */
export const treeFromIndex = (held: ReadonlyMap<string, HeldDir>, request: TreeRequest): WalkResult | undefined => {
  const { dir, extraIgnore } = request
  const top = held.get(dir)
  // The walk fails on a directory it cannot read: that error is the walk's to give.
  if (top === undefined || top.unreadable) return undefined
  const ignored = (path: string, isDir: boolean): boolean => {
    if (extraIgnore === undefined) return false
    const rel = relativeInside(dir, path)
    return rel !== undefined && rel !== "" && matchesPatterns(extraIgnore, rel, isDir)
  }
  const dirs: Array<WalkedDir> = []
  const unreadable: Array<string> = []
  const skipped: Array<string> = []
  let seen = 0
  let level: Array<{ readonly path: string; readonly depth: number }> = [{ path: dir, depth: 0 }]
  for (;;) {
    const next: Array<{ readonly path: string; readonly depth: number }> = []
    for (const { path, depth } of level) {
      const d = held.get(path)
      if (d === undefined) return undefined
      if (d.unreadable) {
        unreadable.push(path)
        dirs.push({ path, depth, entries: [] })
        continue
      }
      const entries =
        extraIgnore === undefined ? d.entries : d.entries.filter((e) => !ignored(e.path, e.kind === "dir"))
      for (const s of d.skipped) if (!ignored(s, true)) skipped.push(s)
      for (const e of entries) if (e.kind === "dir") next.push({ path: e.path, depth: depth + 1 })
      seen += entries.length
      dirs.push({ path, depth, entries })
    }
    const stopped = request.maxEntries !== undefined && seen >= request.maxEntries && next.length > 0
    if (stopped || next.length === 0) return { dirs, entries: seen, complete: !stopped, unreadable, skipped }
    level = next
  }
}
