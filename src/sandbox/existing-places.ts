/**
 * Which of a long list of paths exist, as real paths (policy.ts's realPlaces), for lists that are
 * mostly missing: the home credential list, ~100 paths asked about on every sandboxed command so a
 * `~/.netrc` made mid-session is hidden from the next one. A missing path is remembered with the
 * folder that would hold it (its deepest existing ancestor) and that folder's device, inode and
 * change time: while they are the same, the folder has the same entries (adding, removing or
 * renaming one changes its ctime, which no command can set back), so the path is still missing.
 * One lstat per such folder a call, instead of one per path; an existing path is looked up in
 * full every time (its real path can change through a link no folder time shows).
 *
 * Remembered only when sure: the folder's ctime was over a second old when looked at (file
 * times are a clock tick coarse, so a change in the same tick could leave it as it was), and the
 * ancestor is a real folder, not a link (a dangling link's target can appear anywhere).
 */
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { processWide } from "../process-wide/process-wide.ts"

interface Missing {
  readonly folder: string
  readonly dev: bigint
  readonly ino: bigint
  readonly ctime: bigint
}

/** Per missing path, the folder that says it is still missing. */
const missingPlaces = processWide("missing places", () => new Map<string, Missing>())

/** Over this many remembered paths the memory is dropped and built again (a bound, not a tuning). */
const LIMIT = 10_000

const STABLE_MS = 1_000

const lstat = (p: string): NodeFs.BigIntStats | undefined => {
  try {
    return NodeFs.lstatSync(p, { bigint: true, throwIfNoEntry: false })
  } catch {
    return undefined // ENOTDIR, EACCES: not there for this user either
  }
}

const realPath = (p: string): string | undefined => {
  try {
    return NodeFs.realpathSync.native(p)
  } catch {
    return undefined
  }
}

/** What makes `p` (just seen missing) missing, if it can be trusted to say so later. */
const witness = (p: string): Missing | undefined => {
  let folder = NodePath.dirname(p)
  for (;;) {
    const s = lstat(folder)
    if (s !== undefined) {
      if (!s.isDirectory()) return undefined // a link or a file on the way: looked at each time
      if (s.ctimeNs >= BigInt(Date.now() - STABLE_MS) * 1_000_000n) return undefined
      return { folder, dev: s.dev, ino: s.ino, ctime: s.ctimeNs }
    }
    const up = NodePath.dirname(folder)
    if (up === folder) return undefined
    folder = up
  }
}

/** The real paths of those of `paths` that exist (absolute paths), in their order. */
export const existingPlaces = (paths: ReadonlyArray<string>): Array<string> => {
  const out: Array<string> = []
  const missing = missingPlaces.get()
  // A folder's answer, once a call: several paths share one (`~`, `~/.config`).
  const unchanged = new Map<string, boolean>()
  const same = (m: Missing): boolean => {
    let answer = unchanged.get(m.folder)
    if (answer === undefined) {
      const s = lstat(m.folder)
      answer = s?.isDirectory() === true && s.dev === m.dev && s.ino === m.ino && s.ctimeNs === m.ctime
      unchanged.set(m.folder, answer)
    }
    return answer
  }
  if (missing.size > LIMIT) missing.clear()
  for (const p of paths) {
    const known = missing.get(p)
    if (known !== undefined && same(known)) continue
    missing.delete(p)
    if (lstat(p) === undefined) {
      const w = witness(p)
      if (w !== undefined) missing.set(p, w)
      continue
    }
    const real = realPath(p)
    if (real !== undefined) out.push(real)
  }
  return out
}
