/**
 * Who owns a lock, a temp file or a journal: this process, named by its pid and its start time
 * (from /proc, where there is one), so a pid the system has since given to another process is
 * not mistaken for the owner still running.
 */
import * as NFS from "node:fs"

/** The process's start time in clock ticks since boot (field 22 of /proc/<pid>/stat), or "0". */
const startTime = (pid: number): string | undefined => {
  try {
    const stat = NFS.readFileSync(`/proc/${pid}/stat`, "utf8")
    // The command name (field 2) may hold spaces and parentheses: fields are counted after its ")".
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19]
  } catch {
    return undefined
  }
}

export interface Owner {
  readonly pid: number
  readonly start: string
}

export const me: Owner = { pid: process.pid, start: startTime(process.pid) ?? "0" }

/** `<pid>-<start>`: how an owner is written in a file name or a lock file. */
export const ownerTag = (o: Owner): string => `${o.pid}-${o.start}`

export const parseOwner = (tag: string): Owner | undefined => {
  const m = /^(\d+)-(\d+)$/.exec(tag)
  return m === null ? undefined : { pid: Number(m[1]), start: m[2]! }
}

/** Whether the owner still runs. A process we may not signal (EPERM) runs; one we cannot tell about runs. */
export const alive = (o: Owner): boolean => {
  if (o.pid === me.pid) return o.start === me.start
  try {
    process.kill(o.pid, 0)
  } catch (e) {
    return (e as NodeJS.ErrnoException).code !== "ESRCH"
  }
  const start = startTime(o.pid)
  // Same pid, another start time: the owner died and its pid was reused.
  return start === undefined || o.start === "0" || start === o.start
}
