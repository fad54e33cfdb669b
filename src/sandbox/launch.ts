/**
 * A command line plus the files its program takes by descriptor number. bubblewrap reads the
 * system-call filter from fd 3 and writes its info to fd 4, and takes neither by path. A caller
 * that spawns the line itself opens them and hands them to `spawn` (its stdio array), so no
 * process starts for that alone. A caller that can only pass a command line gets `asCommandLine`:
 * a `/bin/sh` that opens them and then execs the line, one process more a call.
 */
import * as NodeFs from "node:fs"

/** A program and its arguments. */
export type CommandLine = readonly [string, ...Array<string>]

/** A file opened on descriptor `fd` of the started program: read from, or truncated and written. */
export interface Descriptor {
  readonly fd: number
  readonly path: string
  readonly mode: "read" | "write"
}

export interface Launch {
  readonly line: CommandLine
  /** In ascending `fd` order, each above 2 (0–2 are the caller's stdio). */
  readonly descriptors: ReadonlyArray<Descriptor>
}

/** `line` with nothing to open. */
export const plainLaunch = (line: CommandLine): Launch => ({ line, descriptors: [] })

/**
 * The launch as one command line: `/bin/sh` opens the descriptors and execs the line. The paths
 * travel as arguments, never inside the script, so no name can be read as shell text.
 */
export const asCommandLine = (launch: Launch): CommandLine => {
  if (launch.descriptors.length === 0) return launch.line
  // `exec` with only redirections opens them in the shell itself (which fails, exiting, if one
  // cannot be opened); the program exec'd next inherits them.
  const opens = launch.descriptors.map((d, i) => ` ${d.fd}${d.mode === "read" ? "<" : ">"}"$${i + 1}"`).join("")
  const count = launch.descriptors.length
  return [
    "/bin/sh",
    "-c",
    `exec${opens}; shift ${count}; exec "$@"`,
    "sandbox",
    ...launch.descriptors.map((d) => d.path),
    ...launch.line
  ]
}

export interface OpenDescriptors {
  /** spawn's stdio entries from fd 3 up: an open descriptor at each wanted number, "ignore" between. */
  readonly extra: ReadonlyArray<number | "ignore">
  /** Closes this process's copies; the started program keeps its own. Call once spawn returned. */
  readonly close: () => void
}

/**
 * Opens `descriptors` for `spawn` (synchronous, as spawn itself is: the child has its copies once
 * spawn returns, so `close` right after it is safe). Throws the open's error, having closed what
 * it opened before it.
 */
export const openDescriptors = (descriptors: ReadonlyArray<Descriptor>): OpenDescriptors => {
  const opened: Array<number> = []
  const close = () => {
    for (const fd of opened.splice(0)) {
      try {
        NodeFs.closeSync(fd)
      } catch {}
    }
  }
  const extra: Array<number | "ignore"> = []
  try {
    for (const d of descriptors) {
      while (extra.length + 3 < d.fd) extra.push("ignore")
      // The info file is the sandbox's own (a private folder): 0600, as nobody else reads it.
      const fd = NodeFs.openSync(d.path, d.mode === "read" ? "r" : "w", 0o600)
      opened.push(fd)
      extra.push(fd)
    }
  } catch (e) {
    close()
    throw e
  }
  return { extra, close }
}
