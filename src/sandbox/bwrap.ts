/**
 * A sandbox policy as bubblewrap arguments. The whole machine is mounted read-only, then the
 * writable places are bound back writable, the write-denied ones read-only again on top, and the
 * read-denied ones covered (an empty tmpfs over a folder, /dev/null over a file); bubblewrap
 * applies the mounts in the order given, so later ones win. `/tmp` and `/run` are fresh and empty:
 * what a command leaves there goes with it, and the host's sockets in /run are out of reach.
 */
import type { SandboxPolicy } from "./policy.ts"

export interface BwrapCall {
  readonly cwd: string
  /** Extra writable places for this one call (the output file's folder). */
  readonly writable: ReadonlyArray<string>
  /** TMPDIR inside. */
  readonly tempDir: string
  /** The proxy's socket, bound in when the network is filtered rather than off. */
  readonly proxySocket?: string
}

/** What every sandboxed command gets, before its own places (the probe runs exactly these). */
export const BASE_ARGS: ReadonlyArray<string> = [
  "--die-with-parent", // the host process dies: so does every process inside
  "--unshare-pid", // its own PID namespace: a setsid child or a daemon dies with the call
  "--unshare-net", // only a loopback inside; the proxy's socket is the one way out
  "--new-session", // no controlling terminal to push keystrokes into
  "--ro-bind",
  "/",
  "/",
  "--dev",
  "/dev",
  "--proc",
  "/proc",
  "--tmpfs",
  "/tmp",
  "--tmpfs",
  "/run"
]

export const bwrapArgs = (policy: SandboxPolicy, call: BwrapCall): Array<string> => {
  const args = [...BASE_ARGS]
  // Parents before children, so a folder bound inside another keeps its own mount.
  const writable = [...new Set([...policy.writable, ...call.writable])].sort((a, b) => a.length - b.length)
  for (const w of writable) args.push("--bind", w, w)
  for (const w of policy.writeDenied) args.push("--ro-bind", w, w)
  for (const d of policy.readDenied) {
    if (d.directory) args.push("--tmpfs", d.path, "--remount-ro", d.path)
    else args.push("--ro-bind", "/dev/null", d.path)
  }
  if (call.proxySocket !== undefined) args.push("--bind", call.proxySocket, call.proxySocket)
  args.push("--setenv", "TMPDIR", call.tempDir, "--chdir", call.cwd)
  return args
}
