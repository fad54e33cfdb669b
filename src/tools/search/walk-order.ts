/**
 * The orders the index hands its answers in, so glob sorts nothing: a directory's entries in
 * path order, and directories in the order the walk reaches them.
 */
import { comparePaths } from "./backend.ts"
import type { WalkEntry } from "./walk.ts"

/**
 * A directory's entries in the order of the paths below them (comparePaths's). The walk gives
 * them sorted by name, which is that order unless a directory's name is followed by a longer
 * name it begins, with a character before `/` next (`a` before `a.b`: `a.b` < `a/x`). Each
 * neighbour pair is checked (a string test each, mostly); out of order, rarely, a sorted copy.
 */
export const inPathOrder = (entries: ReadonlyArray<WalkEntry>): ReadonlyArray<WalkEntry> => {
  for (let i = 0; i + 1 < entries.length; i++) {
    const a = entries[i]!
    const b = entries[i + 1]!
    const plain = a.name < b.name && !(a.kind === "dir" && b.name.startsWith(a.name))
    if (!plain && byPathKey(a, b) > 0) return [...entries].sort(byPathKey)
  }
  return entries
}

/**
 * The order the walk reaches two directories below one root: shallower first, then by the
 * first name where their paths part (each level read in name order).
 */
export const byWalkOrder = (a: string, b: string): number => {
  const as = a.split("/")
  const bs = b.split("/")
  if (as.length !== bs.length) return as.length - bs.length
  for (let i = 0; i < as.length; i++) if (as[i] !== bs[i]) return comparePaths(as[i]!, bs[i]!)
  return 0
}

const pathKey = (e: WalkEntry) => (e.kind === "dir" ? `${e.name}/` : e.name)
const byPathKey = (a: WalkEntry, b: WalkEntry) => comparePaths(pathKey(a), pathKey(b))
