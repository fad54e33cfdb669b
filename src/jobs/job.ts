/**
 * One background job: a shell command whose stdout and stderr go to a file (as a foreground
 * bash call's do), whose stdin stays open for the model to write to, and whose whole process
 * tree is stopped together. What the model has seen is an offset into the file, so a look
 * returns only what is new and nothing is ever held whole in memory.
 */
import { type ChildProcess, spawn } from "node:child_process"
import * as NodeFs from "node:fs"
import { type Descriptor, openDescriptors } from "../sandbox/launch.ts"
import type { JobState } from "../session/job-records.ts"

export type { JobState }

export interface Job {
  readonly id: string
  readonly command: string
  readonly file: string
  readonly started: number
  readonly state: () => JobState
  /** Bytes of output so far. */
  readonly size: () => number
  /** Up to `maxBytes` of output after what was last read, cut on a whole UTF-8 character. */
  readonly readNew: (maxBytes: number) => { readonly text: string; readonly from: number; readonly left: number }
  /** Writes to the job's stdin; `end` closes it (EOF). False when its stdin is closed. */
  readonly write: (text: string, end: boolean) => boolean
  /** Stops the process tree: SIGTERM, then SIGKILL after `graceMs`. Resolves once it has exited. */
  readonly stop: (why: string, graceMs?: number) => Promise<void>
  /** Resolves when the job exits (or at once if it has). */
  readonly exited: Promise<void>
  /** The last time the model looked at it or wrote to it. */
  lastTouched: number
}

/** Where a byte begins a UTF-8 character (not a continuation byte). */
const isStart = (b: number) => (b & 0xc0) !== 0x80

export const startJob = (options: {
  readonly id: string
  readonly command: string
  /** The program and arguments that run `command` with its output redirected into `file`. */
  readonly line: readonly [string, ...Array<string>]
  /** Files opened on the program's descriptors from 3 up (the sandbox's, launch.ts). */
  readonly descriptors?: ReadonlyArray<Descriptor>
  readonly file: string
  readonly cwd: string
}): Job => {
  NodeFs.writeFileSync(options.file, "")
  // Throws (nothing started) when a descriptor's file cannot be opened.
  const fds = openDescriptors(options.descriptors ?? [])
  let state: JobState = { state: "running" }
  let offset = 0
  let stopping: string | undefined
  let child: ChildProcess
  try {
    child = spawn(options.line[0], options.line.slice(1), {
      cwd: options.cwd,
      // Its own process group, so a stop reaches every process the command started.
      detached: true,
      stdio: ["pipe", "ignore", "ignore", ...fds.extra]
    })
  } finally {
    fds.close() // the child has its own copies once spawn returned
  }
  child.stdin?.on("error", () => undefined)
  const exited = new Promise<void>((resolve) => {
    child.on("error", (e) => {
      state = { state: "killed", signal: "none", why: `it could not start: ${e.message}` }
      resolve()
    })
    child.on("exit", (code, signal) => {
      state =
        stopping !== undefined || signal !== null
          ? { state: "killed", signal: signal ?? "SIGTERM", why: stopping ?? `it was killed by ${signal}` }
          : { state: "exited", code: code ?? 0 }
      // Whatever it left running in its group goes with it.
      try {
        if (child.pid !== undefined) process.kill(-child.pid, "SIGKILL")
      } catch {}
      resolve()
    })
  })

  const size = () => {
    try {
      return NodeFs.statSync(options.file).size
    } catch {
      return offset
    }
  }

  const readNew = (maxBytes: number) => {
    const total = size()
    const want = Math.min(maxBytes, total - offset)
    if (want <= 0) return { text: "", from: offset, left: 0 }
    const buf = Buffer.alloc(want)
    const fd = NodeFs.openSync(options.file, "r")
    let got: number
    try {
      got = NodeFs.readSync(fd, buf, 0, want, offset)
    } finally {
      NodeFs.closeSync(fd)
    }
    // Stop before a character the read cut in two; it comes whole next time.
    let end = got
    if (offset + got < total) {
      let i = got - 1
      while (i > 0 && !isStart(buf[i]!)) i--
      const lead = buf[i]!
      const len = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc0 ? 2 : 1
      if (i + len > got) end = i
    }
    const from = offset
    offset += end
    return { text: buf.subarray(0, end).toString("utf8"), from, left: total - offset }
  }

  const signalGroup = (signal: NodeJS.Signals) => {
    try {
      if (child.pid !== undefined) process.kill(-child.pid, signal)
    } catch {}
  }

  const stop = async (why: string, graceMs = 2_000) => {
    if (state.state !== "running") return
    stopping = why
    signalGroup("SIGTERM")
    const timer = setTimeout(() => signalGroup("SIGKILL"), graceMs)
    await exited
    clearTimeout(timer)
  }

  return {
    id: options.id,
    command: options.command,
    file: options.file,
    started: Date.now(),
    state: () => state,
    size,
    readNew,
    write: (text, end) => {
      const stdin = child.stdin
      if (stdin === null || stdin.destroyed || stdin.writableEnded || state.state !== "running") return false
      if (text !== "") stdin.write(text)
      if (end) stdin.end()
      return true
    },
    stop,
    exited,
    lastTouched: Date.now()
  }
}
