/**
 * Directory listings kept between calls, trusted the way git trusts its index: a listing is
 * reused only while the directory's inode, mtime and ctime are exactly what they were, and it
 * is kept at all only when the directory had not changed for RACY_MS before it was read.
 *
 * Adding, removing or renaming an entry sets the directory's mtime and ctime to the current
 * time; setting the mtime back (tar, rsync -a) sets the ctime, which nothing can set back. The
 * kernel stamps those times from a clock that advances in steps (up to 10 ms on Linux, 1–2 s on
 * some file systems), so a change made in the same step as the one before it can leave them
 * equal. A directory last changed RACY_MS ago is past that: any later change stamps a later
 * time. A fresher one is read every time, like git's "racily clean" entries.
 *
 * Only for mounts whose ctime is real (local-mounts.ts): FAT and the like derive theirs from
 * the mtime. A stat costs ~2 µs where reading a directory of 50 entries costs ~35 µs, and a
 * tree of thousands of directories is walked with stats instead of reads.
 */
import * as NFS from "node:fs"

/** How long a directory must have been unchanged before its listing is kept. */
export const RACY_MS = 3_000
/** Bounds: directories, and entries across all of them. */
const MAX_DIRECTORIES = 1_000
const MAX_ENTRIES = 100_000

interface Kept<E> {
  readonly dev: number
  readonly ino: number
  readonly mtimeMs: number
  readonly ctimeMs: number
  readonly entries: ReadonlyArray<E>
}

export interface ListingCache<E> {
  /**
   * The entries of directory `path`: the kept listing when the directory is unchanged, else
   * `read()` (which throws what reading throws: a missing path, not a directory, …). Always a
   * new array, which the caller may sort.
   */
  readonly list: (path: string, read: () => ReadonlyArray<E>) => Array<E>
  /** Listings reused and read, for tests and benchmarks. */
  readonly stats: () => { readonly hits: number; readonly reads: number }
}

export const makeListingCache = <E>(now: () => number = Date.now): ListingCache<E> => {
  // A Map keeps insertion order: delete-then-set makes a listing the most recently used.
  const kept = new Map<string, Kept<E>>()
  let entries = 0
  let hits = 0
  let reads = 0

  const drop = (path: string) => {
    const old = kept.get(path)
    if (old === undefined) return
    kept.delete(path)
    entries -= old.entries.length
  }

  const list = (path: string, read: () => ReadonlyArray<E>): Array<E> => {
    const st = NFS.statSync(path, { throwIfNoEntry: false })
    // Missing or not a directory: reading says so, with the error the caller expects.
    if (st === undefined || !st.isDirectory()) {
      reads++
      return [...read()]
    }
    const hit = kept.get(path)
    if (
      hit !== undefined &&
      hit.ino === st.ino &&
      hit.dev === st.dev &&
      hit.mtimeMs === st.mtimeMs &&
      hit.ctimeMs === st.ctimeMs
    ) {
      kept.delete(path)
      kept.set(path, hit)
      hits++
      return hit.entries.slice()
    }
    drop(path)
    reads++
    const fresh = read()
    // Settled before the read began: any change after it stamps a later time (see above).
    if (now() - Math.max(st.mtimeMs, st.ctimeMs) < RACY_MS || fresh.length > MAX_ENTRIES) return [...fresh]
    kept.set(path, { dev: st.dev, ino: st.ino, mtimeMs: st.mtimeMs, ctimeMs: st.ctimeMs, entries: fresh })
    entries += fresh.length
    while (kept.size > MAX_DIRECTORIES || entries > MAX_ENTRIES) drop(kept.keys().next().value!)
    return fresh.slice()
  }

  return { list, stats: () => ({ hits, reads }) }
}
