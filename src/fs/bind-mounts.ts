/**
 * Bind mounts: another name of a file, as a hard link is, that its link count does not show. A
 * secret bind-mounted under an innocent name (`mount --bind ~/.ssh/id_rsa notes.txt`, or a folder
 * of secrets over a project folder) has one link, and the same device and inode as the secret.
 * So a file on a bind mount — a mount of part of a file system, whose root in mountinfo is not
 * `/` — or on a mount the table does not know yet is compared by identity with the secrets too
 * (src/sandbox/secret-files.ts), as a file with more than one link is.
 *
 * The table is /proc/self/mountinfo, read at most once a second; a descriptor's mount id
 * (/proc/self/fdinfo) the table does not hold makes it read again at once, so a mount made just
 * before a read is seen. Linux only: elsewhere there is no table and nothing counts as mounted
 * (macOS has no bind mounts; a nullfs or loopback mount is not seen).
 */
import * as NFS from "node:fs"
import { processWide } from "../process-wide/process-wide.ts"

interface Table {
  readonly at: number
  /** Mount id → whether it is a bind of part of a file system. */
  readonly bindById: ReadonlyMap<number, boolean>
  /** The mount points of binds. */
  readonly bindPoints: ReadonlyArray<string>
}

const TABLE_MS = 1_000
const hasProc = process.platform === "linux" && NFS.existsSync("/proc/self/mountinfo")
/** The table last read: the machine's mounts, so the process's (src/process-wide), not a layer's. */
const lastTable = processWide("bind-mount table", () => ({ table: undefined as Table | undefined }))

const decodeOctal = (field: string): string =>
  field.replace(/\\([0-7]{3})/g, (_, oct: string) => String.fromCharCode(Number.parseInt(oct, 8)))

const readTable = (): Table => {
  const bindById = new Map<number, boolean>()
  const bindPoints: Array<string> = []
  let text = ""
  try {
    text = NFS.readFileSync("/proc/self/mountinfo", "utf8")
  } catch {
    // unreadable: no mount is known, so every descriptor's mount counts as unknown
  }
  for (const line of text.split("\n")) {
    const fields = line.split(" ")
    if (fields.length < 5) continue
    const bind = fields[3] !== "/"
    bindById.set(Number(fields[0]), bind)
    if (bind) bindPoints.push(decodeOctal(fields[4]!))
  }
  const table = { at: Date.now(), bindById, bindPoints }
  lastTable.get().table = table
  return table
}

const current = (): Table => {
  const { table } = lastTable.get()
  return table !== undefined && Date.now() - table.at <= TABLE_MS ? table : readTable()
}

/** The mount id of an open descriptor, or undefined where the system cannot say. */
const mountIdOf = (fd: number): number | undefined => {
  try {
    const m = /^mnt_id:\s*(\d+)/m.exec(NFS.readFileSync(`/proc/self/fdinfo/${fd}`, "utf8"))
    return m === null ? undefined : Number(m[1])
  } catch {
    return undefined
  }
}

/** Whether the file open as `fd` is on a bind mount, or on a mount made after the table was read. */
export const onBindMount = (fd: number): boolean => {
  if (!hasProc) return false
  const id = mountIdOf(fd)
  if (id === undefined) return false
  const known = current().bindById.get(id) ?? readTable().bindById.get(id)
  return known !== false
}

/** Whether `path` (absolute, real) is a bind mount point or lies below one. */
export const underBindMount = (path: string): boolean => {
  if (!hasProc) return false
  for (const point of current().bindPoints) {
    if (path === point || point === "/" || path.startsWith(`${point}/`)) return true
  }
  return false
}
