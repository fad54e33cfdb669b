/**
 * What ends a command's processes beyond its process group, outside a PID namespace.
 *
 * - A mark they inherit: every command runs with `FREECODE_CALL=<token>` in its environment,
 *   and a process that left the group (`setsid -f`, a double fork) still carries it; at the
 *   call's end every process of this user whose environment holds the mark is killed. A process
 *   that clears or rewrites its own environment (`env -i`, exec with a fresh one) sheds it.
 * - A watchdog for our own death: a small shell per command, in a session of its own, holds a
 *   pipe from us; when the pipe closes because we died (SIGKILLed mid-call too) it kills the
 *   command's group and every process carrying its mark. At the call's normal end it is stopped.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { randomUUID } from "node:crypto"
import { readdirSync, readFileSync } from "node:fs"

export const MARK_NAME = "FREECODE_CALL"

export const newMark = (): string => randomUUID()

const uid = typeof process.getuid === "function" ? process.getuid() : undefined

/** Pids of running processes whose environment holds `MARK_NAME=mark` (Linux; empty elsewhere). */
export const markedPids = (mark: string): ReadonlyArray<number> => {
  let names: Array<string>
  try {
    names = readdirSync("/proc")
  } catch {
    return []
  }
  const needle = Buffer.from(`${MARK_NAME}=${mark}\0`)
  const pids: Array<number> = []
  for (const name of names) {
    const c = name.charCodeAt(0)
    if (c < 48 || c > 57) continue
    try {
      // Another user's environ cannot be read (EACCES): only our own processes are candidates.
      const env = readFileSync(`/proc/${name}/environ`)
      if (env.includes(needle)) pids.push(Number(name))
    } catch {
      // Gone meanwhile, or not ours.
    }
  }
  return pids.filter((pid) => pid !== process.pid)
}

/** SIGKILL to every process still carrying the mark, until none is left (a fork may race the scan). */
export const killMarked = (mark: string): void => {
  if (uid === undefined) return
  for (let round = 0; round < 5; round++) {
    const pids = markedPids(mark)
    if (pids.length === 0) return
    for (const pid of pids) {
      try {
        process.kill(pid, "SIGKILL")
      } catch {
        // Already gone.
      }
    }
  }
}

/**
 * The watchdog's program ($1 the group, $2 the mark): it waits for the end of its input, which
 * comes when we close the pipe or die, then kills the group and every process carrying the mark.
 */
const WATCHDOG = `
while read -r _; do :; done
kill -KILL -- "-$1" 2>/dev/null
for e in $(grep -lzx "${MARK_NAME}=$2" /proc/[0-9]*/environ 2>/dev/null); do
  p=\${e#/proc/}; kill -KILL "\${p%/environ}" 2>/dev/null
done
`

/**
 * Starts a watchdog for a command's group and mark, in a session of its own (never in the
 * group it kills); returns its stop, for the call's normal end (the group is already ended
 * then, and its number may be reused). Nothing when it cannot start: the call runs anyway.
 */
export const watch = (pgid: number, mark: string): (() => void) => {
  let dog: ChildProcess
  try {
    // --norc: its stdin is a pipe (a socket to bash), which would make bash source ~/.bashrc.
    dog = spawn("/bin/bash", ["--norc", "-c", WATCHDOG, "watchdog", String(pgid), mark], {
      detached: true,
      stdio: ["pipe", "ignore", "ignore"]
    })
  } catch {
    return () => {}
  }
  dog.on("error", () => {})
  dog.stdin?.on("error", () => {})
  // Neither the watchdog nor its pipe keeps this process alive.
  dog.unref()
  ;(dog.stdin as unknown as { unref?: () => void } | null)?.unref?.()
  return () => {
    try {
      dog.kill("SIGKILL")
    } catch {
      // Already gone.
    }
  }
}
