/**
 * Makes the missing folders a write lands in so that a racing process cannot slip another
 * folder in: a folder swapped for a link, or one renamed into the place of a folder the write
 * is making (a control folder like `.git/hooks`, or `.git` as a parent), would otherwise take
 * the write. On Linux each folder is made through the folder above it as opened
 * (`/proc/self/fd/<n>/<name>`), starting from the deepest folder the permission check saw there
 * (CheckedPath.base: the same device and inode), and opened at once without following a link;
 * what is opened must be the folder just made: a folder, this user's, holding nothing, born
 * now (where the file system records a birth time). The write then requires that folder (its
 * device and inode, atomic-write.ts), so a swap after it was made is refused too. A folder that
 * appeared since the check, made by another process (another write into the same new folder),
 * is taken only when it is a folder of this user's born after the check: an older one renamed
 * into its place is refused, and so is any where the file system records no birth time.
 *
 * Where the window remains: between making a folder and opening it (microseconds), a racing
 * process could put in an empty folder of this user's born within 0.1 s before, which it
 * could have written into itself. Where /proc/self/fd does not exist, each folder is made by
 * path and looked at (a folder, not a link, this user's), the window as small as that makes it.
 */
import * as NFS from "node:fs"
import * as NodePath from "node:path"
import type { Effect, PlatformError } from "effect"
import type { CheckedBase, CheckedEntry } from "../tool/tool.ts"
import { descriptorPath, hasProcFd, io, MovedError } from "./atomic-write.ts"

/** What the permission check saw of a write's folder (CheckedPath.folder and .base). */
export interface FolderCheck {
  readonly folder?: CheckedEntry | null | undefined
  readonly base?: CheckedBase | undefined
}

/** Folders one write made (real path → entry): a second file of the write goes in them. */
export type MadeFolders = Map<string, CheckedEntry>

/** Makes the folder a write's `target` goes in (WriteSteps.makeParent): the folder it must then find there, if known. */
export type MakeParent = (
  target: string,
  check: FolderCheck,
  made: MadeFolders
) => Effect.Effect<CheckedEntry | undefined, PlatformError.PlatformError>

/** A birth time this far before the making still counts as now (the kernel's clock is coarse). */
const BIRTH_SLACK_MS = 100

const entryOf = (st: NFS.Stats): CheckedEntry => ({ dev: st.dev, ino: st.ino, mode: st.mode })
const sameEntry = (a: CheckedEntry, b: CheckedEntry) => a.dev === b.dev && a.ino === b.ino
const code = (e: unknown) => (e as NodeJS.ErrnoException).code
const uid = () => process.geteuid?.()

const swapped = (path: string, why: string) =>
  new MovedError(
    `the folder ${path}, which this write was making, ${why}; nothing was written. Call again: it is checked afresh`
  )
const appeared = (path: string, why: string) =>
  new MovedError(
    `the folder ${path} was missing when the permission check looked and something else has made it since, and it ${why} (a folder renamed into its place?); nothing was written. Call again: it is checked afresh`
  )

/**
 * Why a folder another process made since the check (another write into the same new folder)
 * cannot be the write's, or undefined: it must be a folder of this user's born after the check —
 * an older one renamed into its place (`.git/hooks`) is not. Where no birth time is recorded,
 * nothing vouches for it.
 */
const notMadeSince = (st: NFS.Stats, start: Start): string | undefined => {
  if (!st.isDirectory()) return "is not a folder"
  if (uid() !== undefined && st.uid !== uid()) return "belongs to another user"
  // No check ran (the library's ungated route): there is nothing it could differ from.
  if (start.expect === undefined) return undefined
  if (start.checkedAt === undefined || !(st.birthtimeMs > 0)) return "cannot be told apart from an older folder"
  if (st.birthtimeMs < start.checkedAt - BIRTH_SLACK_MS) return "is older than the check"
  return undefined
}

const notBase = (path: string) =>
  new MovedError(
    `the folder ${path} is another folder than the one the permission check saw (one renamed into its place since?); nothing was written. Call again: it is checked afresh`
  )

/** Why a folder opened right after making it may not be the one made, or undefined. */
const notFresh = (st: NFS.Stats, listing: ReadonlyArray<string>, madeAt: number): string | undefined => {
  if (!st.isDirectory()) return "is not a folder"
  if (uid() !== undefined && st.uid !== uid()) return "belongs to another user"
  if (listing.length > 0) return "already held files (another folder was put in its place)"
  if (st.birthtimeMs > 0 && st.birthtimeMs < madeAt - BIRTH_SLACK_MS)
    return "is older than the write (another folder was put in its place)"
  return undefined
}

/** Makes the folder `at`: true, or false when something is there already (made since the check). */
const madeNew = (at: string): boolean => {
  try {
    NFS.mkdirSync(at)
    return true
  } catch (e) {
    if (code(e) !== "EEXIST") throw e
    return false
  }
}

interface Start {
  readonly path: string
  /** The folder the check saw there; undefined: nothing was checked. */
  readonly expect?: CheckedEntry
  /** When the check looked. */
  readonly checkedAt?: number
}

/** Where the walk starts: the base the check saw, else the deepest folder there now (nothing to compare). */
const startOf = (dir: string, check: FolderCheck): Start | undefined => {
  if (check.folder === null && check.base !== undefined)
    return { path: check.base.path, expect: check.base.entry, checkedAt: check.base.at }
  let at = dir
  while (NFS.lstatSync(at, { throwIfNoEntry: false }) === undefined) {
    if (NodePath.dirname(at) === at) return undefined
    at = NodePath.dirname(at)
  }
  return at === dir ? undefined : { path: at }
}

/**
 * Makes `dir` (a real path) and the folders above it that are missing, as described above; the
 * entry the write must find at `dir`, or undefined when nothing was made nor checked. Throws a
 * MovedError when a folder is not the one checked or made, else the system's error.
 */
export const makeFolders = (dir: string, check: FolderCheck, made: MadeFolders): CheckedEntry | undefined => {
  // There when checked: the write requires that folder and makes none.
  if (check.folder !== undefined && check.folder !== null) return check.folder
  const known = made.get(dir)
  if (known !== undefined) return known
  const start = startOf(dir, check)
  if (start === undefined) return undefined
  const names = NodePath.relative(start.path, dir).split(NodePath.sep)
  if (names[0] === ".." || NodePath.isAbsolute(names[0]!)) throw notBase(start.path)
  return hasProcFd ? byDescriptor(start, names, made) : byPath(start, names, made)
}

const byDescriptor = (start: Start, names: ReadonlyArray<string>, made: MadeFolders): CheckedEntry => {
  let fd = NFS.openSync(start.path, NFS.constants.O_RDONLY | NFS.constants.O_DIRECTORY)
  try {
    if (descriptorPath(fd) !== start.path) throw notBase(start.path)
    let entry = entryOf(NFS.fstatSync(fd))
    if (start.expect !== undefined && !sameEntry(entry, start.expect)) throw notBase(start.path)
    let path = start.path
    for (const name of names) {
      path = NodePath.join(path, name)
      const at = `/proc/self/fd/${fd}/${name}`
      let mine = made.get(path)
      const madeAt = Date.now()
      const since = mine === undefined && !madeNew(at)
      let next: number
      try {
        next = NFS.openSync(at, NFS.constants.O_RDONLY | NFS.constants.O_DIRECTORY | NFS.constants.O_NOFOLLOW)
      } catch (e) {
        const c = code(e)
        if (c === "ELOOP" || c === "ENOTDIR")
          throw since ? appeared(path, "is a link or a file") : swapped(path, "was replaced by a link or a file")
        if (c === "ENOENT") throw swapped(path, "was moved away")
        throw e
      }
      NFS.closeSync(fd)
      fd = next
      const st = NFS.fstatSync(fd)
      entry = entryOf(st)
      if (since) {
        const why = notMadeSince(st, start)
        if (why !== undefined) throw appeared(path, why)
        mine = entry
        made.set(path, entry)
      }
      if (mine !== undefined) {
        if (!sameEntry(entry, mine)) throw swapped(path, "is another folder than the one it made")
        continue
      }
      const why = notFresh(st, NFS.readdirSync(`/proc/self/fd/${fd}`), madeAt)
      if (why !== undefined) throw swapped(path, why)
      made.set(path, entry)
    }
    return entry
  } finally {
    NFS.closeSync(fd)
  }
}

const byPath = (start: Start, names: ReadonlyArray<string>, made: MadeFolders): CheckedEntry => {
  const base = NFS.lstatSync(start.path)
  if (!base.isDirectory() || (start.expect !== undefined && !sameEntry(entryOf(base), start.expect)))
    throw notBase(start.path)
  let path = start.path
  let entry = entryOf(base)
  for (const name of names) {
    path = NodePath.join(path, name)
    const mine = made.get(path)
    const since = mine === undefined && !madeNew(path)
    const st = NFS.lstatSync(path)
    entry = entryOf(st)
    if (st.isSymbolicLink()) throw since ? appeared(path, "is a link") : swapped(path, "was replaced by a link")
    if (since) {
      const why = notMadeSince(st, start)
      if (why !== undefined) throw appeared(path, why)
    } else {
      const why = mine === undefined ? notFresh(st, [], 0) : sameEntry(entry, mine) ? undefined : "is another folder"
      if (why !== undefined) throw swapped(path, why)
    }
    made.set(path, entry)
  }
  return entry
}

/** WriteSteps.makeParent on node:fs. */
export const nativeMakeParent: MakeParent = (target, check, made) =>
  io("mkdir", target, () => makeFolders(NodePath.dirname(target), check, made))
