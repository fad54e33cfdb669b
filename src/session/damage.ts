/**
 * What to do with a state file that is damaged or busy. A damaged one (SQLite: not a database,
 * malformed pages) is moved aside under a dated name, so the caller can start a fresh one and
 * the person still has the old bytes; a busy one names, where the system says, who holds it.
 */
import { readFileSync, renameSync, rmSync, statSync } from "node:fs"

/** SQLite's result code, without the extended bits. */
const baseCode = (error: unknown): number | undefined => {
  const code = (error as { errcode?: number } | undefined)?.errcode
  return typeof code === "number" ? code & 0xff : undefined
}

const text = (error: unknown) => (error instanceof Error ? error.message : String(error))

/** SQLITE_CORRUPT (11) or SQLITE_NOTADB (26): the file's bytes are wrong, not its use. */
export const isDamaged = (error: unknown): boolean => {
  const base = baseCode(error)
  return base === 11 || base === 26 || /file is not a database|malformed|corrupt/i.test(text(error))
}

/** SQLITE_BUSY (5) or SQLITE_LOCKED (6): another connection holds the lock. */
export const isBusy = (error: unknown): boolean => {
  const base = baseCode(error)
  return base === 5 || base === 6 || /database is locked|database table is locked|busy/i.test(text(error))
}

/** `2026-12-02T05-10-11-123Z`: sorts by time and is a valid file name everywhere. */
const stamp = (now: Date) => now.toISOString().replace(/[:.]/g, "-")

/**
 * Moves `file` (and SQLite's `-wal` beside it) to `<file>.damaged-<time>`, and removes its
 * `-shm` (an index rebuilt from the rest). Returns the new name. Only when `file` is still
 * the inode the caller opened: another process that found the damage first has already moved
 * it, and what is there now is that process's fresh file.
 */
export const moveAside = (file: string, inode: number | undefined, now = new Date()): string | undefined => {
  if (inode !== undefined && inodeOf(file) !== inode) return undefined
  const aside = `${file}.damaged-${stamp(now)}`
  try {
    renameSync(file, aside)
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return undefined
    throw e
  }
  try {
    renameSync(`${file}-wal`, `${aside}-wal`)
  } catch {
    // No write-ahead log: nothing to keep.
  }
  rmSync(`${file}-shm`, { force: true })
  return aside
}

export const inodeOf = (file: string): number | undefined => {
  try {
    return statSync(file).ino
  } catch {
    return undefined
  }
}

/**
 * The processes holding POSIX locks on `files` (SQLite locks the database and, in WAL mode,
 * its `-shm`), from /proc/locks: "pid 123 (node server.js)". Empty where the system does not
 * say (not Linux, or the holder is in another PID namespace).
 */
export const lockHolders = (files: ReadonlyArray<string>): ReadonlyArray<string> => {
  let table: string
  try {
    table = readFileSync("/proc/locks", "utf8")
  } catch {
    return []
  }
  const inodes = new Set(files.map(inodeOf).filter((i): i is number => i !== undefined))
  const pids = new Set<number>()
  for (const line of table.split("\n")) {
    // "1: POSIX  ADVISORY  WRITE 4242 08:01:1234567 0 EOF" (a "->" line is a waiter, not a holder).
    const fields = line.trim().split(/\s+/)
    if (fields[1] === "->" || fields.length < 6) continue
    const pid = Number(fields[4])
    const inode = Number(fields[5]?.split(":")[2])
    if (Number.isInteger(pid) && pid > 0 && pid !== process.pid && inodes.has(inode)) pids.add(pid)
  }
  return [...pids].map((pid) => {
    try {
      const cmd = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").filter(Boolean).join(" ")
      return cmd === "" ? `pid ${pid}` : `pid ${pid} (${cmd.length > 80 ? `${cmd.slice(0, 80)}…` : cmd})`
    } catch {
      return `pid ${pid}`
    }
  })
}
