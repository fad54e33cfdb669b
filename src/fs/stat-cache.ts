/**
 * What was derived from a file or directory (a directory's listing, a compiled .gitignore),
 * kept between calls and trusted the way git trusts its index: reused only while the path's
 * device, inode, size, mtime and ctime are exactly what they were, and kept at all only when
 * the path had not changed for RACY_MS before it was read.
 *
 * Writing a file, or adding, removing or renaming a directory's entries, sets its mtime and
 * ctime to the current time; setting the mtime back (tar, rsync -a, touch -d) sets the ctime,
 * which nothing can set back. The kernel stamps those times from a clock that advances in steps
 * (up to 10 ms on Linux, 1–2 s on some file systems), so a change made in the same step as the
 * one before it can leave them equal. A path last changed RACY_MS ago is past that: any later
 * change stamps a later time. A fresher one is read every time, like git's "racily clean"
 * entries.
 *
 * Only for mounts whose ctime is real (local-mounts.ts hasRealCtime): FAT and the like derive
 * theirs from the mtime. A stat costs ~2 µs where reading a directory of 50 entries costs
 * ~35 µs and compiling a .gitignore more.
 */
import type * as NFS from "node:fs"

/** How long a path must have been unchanged before what was derived from it is kept. */
export const RACY_MS = 3_000

interface Kept<V> {
  readonly dev: number
  readonly ino: number
  readonly size: number
  readonly mtimeMs: number
  readonly ctimeMs: number
  readonly value: V
  readonly weight: number
}

export interface StatCacheOptions<V> {
  /** Most paths kept, and most total weight (a listing weighs its entries). */
  readonly maxPaths: number
  readonly maxWeight: number
  readonly weight: (value: V) => number
  /** The clock the racy window is measured on (tests move it). */
  readonly now?: () => number
}

export interface StatCache<V> {
  /**
   * The value derived from `path`, whose stat (taken before reading it) is `st`: the kept one
   * when the path is unchanged, else `read()`, kept when the path was settled.
   */
  readonly get: (path: string, st: NFS.Stats, read: () => V) => V
  /** Values reused and read, for tests and benchmarks. */
  readonly stats: () => { readonly hits: number; readonly reads: number }
}

export const makeStatCache = <V>(options: StatCacheOptions<V>): StatCache<V> => {
  const now = options.now ?? Date.now
  // A Map keeps insertion order: delete-then-set makes a path the most recently used.
  const kept = new Map<string, Kept<V>>()
  let weight = 0
  let hits = 0
  let reads = 0

  const drop = (path: string) => {
    const old = kept.get(path)
    if (old === undefined) return
    kept.delete(path)
    weight -= old.weight
  }

  const get = (path: string, st: NFS.Stats, read: () => V): V => {
    const hit = kept.get(path)
    if (
      hit !== undefined &&
      hit.ino === st.ino &&
      hit.dev === st.dev &&
      hit.size === st.size &&
      hit.mtimeMs === st.mtimeMs &&
      hit.ctimeMs === st.ctimeMs
    ) {
      kept.delete(path)
      kept.set(path, hit)
      hits++
      return hit.value
    }
    drop(path)
    reads++
    const value = read()
    // Settled before the read began: any change after it stamps a later time (see above).
    if (now() - Math.max(st.mtimeMs, st.ctimeMs) < RACY_MS) return value
    const w = options.weight(value)
    if (w > options.maxWeight) return value
    const { dev, ino, size, mtimeMs, ctimeMs } = st
    kept.set(path, { dev, ino, size, mtimeMs, ctimeMs, value, weight: w })
    weight += w
    while (kept.size > options.maxPaths || weight > options.maxWeight) drop(kept.keys().next().value!)
    return value
  }

  return { get, stats: () => ({ hits, reads }) }
}
