/**
 * Whether a path lies on a local file system, where a small synchronous call is safe: it waits
 * on the page cache or a local disk, never on a network. Read from the mount table once, on
 * Linux, by the native LocalFs layer when it is built; anywhere else nothing counts as local and
 * every call takes the thread pool. `FREECODE_FS_POOL=1` sends every call to the pool
 * (docs/configuration.md).
 */
import { readFileSync } from "node:fs"

/**
 * File systems whose calls never wait on another machine or a user-space daemon. proc, sysfs and
 * devtmpfs are left out on purpose: some of their files block on read (/proc/kmsg is a "regular
 * file" of size 0 that waits for kernel messages), and a blocked pool thread can time out where a
 * blocked process cannot.
 */
const LOCAL_TYPES = new Set([
  "ext2",
  "ext3",
  "ext4",
  "xfs",
  "btrfs",
  "zfs",
  "f2fs",
  "bcachefs",
  "jfs",
  "reiserfs",
  "tmpfs",
  "ramfs",
  "overlay",
  "squashfs",
  "iso9660",
  "vfat",
  "exfat",
  "ntfs3",
  "hfsplus"
])

/**
 * Local file systems whose ctime is derived or emulated rather than kept by the kernel:
 * stat-cache.ts, which relies on a ctime nothing can set back, does not trust them.
 */
const EMULATED_CTIME_TYPES = new Set(["vfat", "exfat", "ntfs3", "hfsplus"])

export interface Mount {
  readonly point: string
  readonly local: boolean
  readonly realCtime: boolean
}

/** mountinfo writes space, tab, newline and backslash in a mount point as octal escapes. */
const decodeOctal = (field: string): string =>
  field.replace(/\\([0-7]{3})/g, (_, oct: string) => String.fromCharCode(Number.parseInt(oct, 8)))

/** The mount table, longest mount point first, so the first prefix found is the path's mount. */
export const parseMountInfo = (text: string): ReadonlyArray<Mount> => {
  const mounts: Array<Mount> = []
  for (const line of text.split("\n")) {
    const fields = line.split(" ")
    const dash = fields.indexOf("-")
    if (dash < 0 || fields[4] === undefined || fields[dash + 1] === undefined) continue
    const type = fields[dash + 1]!
    const local = LOCAL_TYPES.has(type)
    mounts.push({ point: decodeOctal(fields[4]), local, realCtime: local && !EMULATED_CTIME_TYPES.has(type) })
  }
  return mounts.sort((a, b) => b.point.length - a.point.length)
}

/**
 * This machine's mount table: read from /proc/self/mountinfo, on Linux. Empty elsewhere, or
 * with `FREECODE_FS_POOL=1`: nothing then counts as local and every call takes the thread pool.
 */
export const readMountTable = (): ReadonlyArray<Mount> => {
  if (process.env.FREECODE_FS_POOL === "1" || process.platform !== "linux") return []
  try {
    return parseMountInfo(readFileSync("/proc/self/mountinfo", "utf8"))
  } catch {
    return []
  }
}

const under = (path: string, point: string): boolean =>
  point === "/" || path === point || (path.startsWith(point) && path[point.length] === "/")

/** `/a/b/c` → `a`. */
const firstComponent = (path: string): string => {
  const end = path.indexOf("/", 1)
  return end === -1 ? path.slice(1) : path.slice(1, end)
}

/**
 * A table's mount points grouped by their first component: a path can only be under a mount
 * point that starts with the same one. Every file call asks for its path's mount, and most paths
 * are on `/`, which a scan reaches last (a desktop has dozens of mounts, from /proc to /snap).
 */
interface MountIndex {
  readonly root: Mount | undefined
  readonly byFirst: ReadonlyMap<string, ReadonlyArray<Mount>>
}

const indexOf = (table: ReadonlyArray<Mount>): MountIndex => {
  let root: Mount | undefined
  const byFirst = new Map<string, Array<Mount>>()
  // In the table's order, longest mount point first: the first one a path is under is its mount.
  for (const mount of table) {
    if (mount.point === "/") {
      root ??= mount
      continue
    }
    const first = firstComponent(mount.point)
    const group = byFirst.get(first)
    if (group === undefined) byFirst.set(first, [mount])
    else group.push(mount)
  }
  return { root, byFirst }
}

/** Finds a path's mount in `table`, indexed once. */
export const makeMountLookup = (table: ReadonlyArray<Mount>): ((path: string) => Mount | undefined) => {
  const index = indexOf(table)
  return (path) => {
    const candidates = index.byFirst.get(firstComponent(path))
    if (candidates !== undefined) for (const mount of candidates) if (under(path, mount.point)) return mount
    return index.root
  }
}

/** The mount `path` (absolute) sits on in `table`; undefined when the table knows none. */
export const mountOf = (path: string, table: ReadonlyArray<Mount>): Mount | undefined => makeMountLookup(table)(path)

/** Whether the mount `path` (absolute) sits on in `table` is local. */
export const isOnLocalMount = (path: string, table: ReadonlyArray<Mount>): boolean =>
  mountOf(path, table)?.local ?? false

/** Whether `path` (absolute) is on a local mount whose ctime the kernel keeps (see EMULATED_CTIME_TYPES). */
export const hasRealCtime = (path: string, table: ReadonlyArray<Mount>): boolean =>
  mountOf(path, table)?.realCtime ?? false
