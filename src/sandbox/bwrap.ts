/**
 * A sandbox policy as bubblewrap arguments. The whole machine is mounted read-only, then the
 * writable places are bound back writable, the write-denied ones read-only again on top, and the
 * read-denied ones covered (an empty tmpfs over a folder, /dev/null over a file); bubblewrap
 * applies the mounts in the order given, so later ones win. `/tmp` and `/run` are fresh and empty:
 * what a command leaves there goes with it, and the host's sockets in /run are out of reach.
 *
 * The command has no capabilities and cannot gain any, whoever starts it (root included): its
 * own user namespace, every capability dropped, no_new_privs (bubblewrap sets it), no further
 * user namespaces, and the system-call filter of seccomp.ts, read by bubblewrap from fd 3.
 */
import { asCommandLine, type CommandLine, type Launch } from "./launch.ts"
import type { SandboxPolicy } from "./policy.ts"
import { PROXY_PORT, PROXY_VARIABLES } from "./proxy.ts"

export interface BwrapCall {
  readonly cwd: string
  /** Extra writable places for this one call (the output file's folder). */
  readonly writable: ReadonlyArray<string>
  /** TMPDIR inside. */
  readonly tempDir: string
  /** The proxy's socket, bound in when the network is filtered rather than off. */
  readonly proxySocket?: string
  /** What the probe found works here (availability.ts). */
  readonly hardening: BwrapHardening
  /**
   * An empty regular file, the source of a missing control file's placeholder. Not /dev/null:
   * bubblewrap binds without devices, and git warns on every command about a file it cannot open.
   */
  readonly emptyFile?: string
  /**
   * Where bubblewrap writes the host pid of the sandbox's init (`--info-fd`): the placeholders'
   * manifest's answer to whether this sandbox still runs (placeholders.ts).
   */
  readonly info?: string
}

/** What the probe found this bubblewrap and kernel can do, beyond BASE_ARGS. */
export interface BwrapHardening {
  /** The seccomp filter's file (seccomp.ts), or undefined on an architecture without one. */
  readonly seccompFile: string | undefined
  /** `--disable-userns` works here (bubblewrap 0.8 and later). */
  readonly disableUserns: boolean
}

/** What every sandboxed command gets, before its own places (the probe runs exactly these). */
export const BASE_ARGS: ReadonlyArray<string> = [
  "--die-with-parent", // the host process dies: so does every process inside
  "--unshare-pid", // its own PID namespace: a setsid child or a daemon dies with the call
  "--unshare-net", // only a loopback inside; the proxy's socket is the one way out
  "--unshare-ipc", // SysV semaphores, queues and shared memory of its own, gone with the call
  "--unshare-user", // its capabilities, if any, are over its own namespace only ...
  "--cap-drop", // ... and there are none: root inside cannot remount, unmount or write /etc
  "ALL",
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

/** BASE_ARGS with what the probe found works: no more user namespaces, the filter from fd 3. */
export const hardenedArgs = (hardening: BwrapHardening): Array<string> => [
  ...BASE_ARGS,
  ...(hardening.disableUserns ? ["--disable-userns"] : []),
  ...(hardening.seccompFile === undefined ? [] : ["--seccomp", "3"])
]

/**
 * `bwrap ARGS` with the filter's file open on fd 3 and the info file on fd 4: bubblewrap takes
 * both only as file descriptors, which the caller opens for it (launch.ts).
 */
const withFilter = (hardening: BwrapHardening, line: CommandLine, info?: string): Launch => ({
  line,
  descriptors: [
    ...(hardening.seccompFile === undefined ? [] : [{ fd: 3, path: hardening.seccompFile, mode: "read" as const }]),
    ...(info === undefined ? [] : [{ fd: 4, path: info, mode: "write" as const }])
  ]
})

export const bwrapArgs = (policy: SandboxPolicy, call: BwrapCall): Array<string> => {
  const args = hardenedArgs(call.hardening)
  // Parents before children, so a folder bound inside another keeps its own mount.
  const writable = [...new Set([...policy.writable, ...call.writable])].sort((a, b) => a.length - b.length)
  for (const w of writable) args.push("--bind", w, w)
  // Control paths' folders onto themselves (not renamable), then the control paths read-only.
  for (const p of policy.pinned) args.push("--bind", p, p)
  for (const w of policy.writeDenied) args.push("--ro-bind", w, w)
  for (const p of policy.placeholders) {
    if (p.directory) args.push("--tmpfs", p.path, "--remount-ro", p.path)
    else args.push("--ro-bind", call.emptyFile ?? "/dev/null", p.path)
  }
  for (const d of policy.readDenied) {
    if (d.directory) args.push("--tmpfs", d.path, "--remount-ro", d.path)
    else args.push("--ro-bind", "/dev/null", d.path)
  }
  if (call.proxySocket !== undefined) args.push("--bind", call.proxySocket, call.proxySocket)
  if (call.info !== undefined) args.push("--info-fd", "4")
  args.push("--setenv", "TMPDIR", call.tempDir, "--chdir", call.cwd)
  return args
}

/** 127.0.0.1:PROXY_PORT as /proc/net/tcp writes it. */
const LISTEN_ADDRESS = `0100007F:${PROXY_PORT.toString(16).toUpperCase().padStart(4, "0")}`

/**
 * Inside a filtered sandbox: socat carries 127.0.0.1:PROXY_PORT to the proxy's socket, and the
 * command starts once socat listens, or after one to two seconds (SECONDS counts whole seconds)
 * if it never does. Listening is read from /proc/net/tcp and the pause between looks is
 * `read -t` on a pipe nobody writes, so waiting starts no process and opens no connection. The
 * limit is time, not a number of looks: on a loaded machine each pause lasts far longer than asked.
 */
const BRIDGE = [
  `"$1" TCP-LISTEN:${PROXY_PORT},bind=127.0.0.1,fork,reuseaddr UNIX-CONNECT:"$2" 2>/dev/null &`,
  "exec 9<> <(:)",
  "SECONDS=0",
  "while ((SECONDS < 2)); do",
  `  while read -r _ local _ state _; do [[ $local == ${LISTEN_ADDRESS} && $state == 0A ]] && break 2; done </proc/net/tcp`,
  "  read -t 0.001 -u 9",
  "done 2>/dev/null", // never into the command's output, whatever went wrong
  "exec 9<&-",
  "shift 2",
  'exec "$@"'
].join("\n")

/**
 * What runs `command` in bubblewrap: its command line and the descriptors to open for it; with
 * `bridge` (the proxy's socket and socat), behind the bridge with the proxy variables pointing at it.
 */
export const bwrapLaunch = (
  bwrap: string,
  policy: SandboxPolicy,
  call: BwrapCall,
  command: ReadonlyArray<string>,
  bridge?: { readonly socket: string; readonly socat: string }
): Launch => {
  if (bridge === undefined)
    return withFilter(call.hardening, [bwrap, ...bwrapArgs(policy, call), "--", ...command], call.info)
  const args = bwrapArgs(policy, { ...call, proxySocket: bridge.socket })
  for (const name of PROXY_VARIABLES) args.push("--setenv", name, `http://127.0.0.1:${PROXY_PORT}`)
  args.push("--unsetenv", "NO_PROXY", "--unsetenv", "no_proxy")
  return withFilter(
    call.hardening,
    [bwrap, ...args, "--", "/bin/bash", "--norc", "-c", BRIDGE, "bridge", bridge.socat, bridge.socket, ...command],
    call.info
  )
}

/** bwrapLaunch as one command line (a `/bin/sh` opens the descriptors): for a caller that cannot hand them over. */
export const bwrapLine = (
  bwrap: string,
  policy: SandboxPolicy,
  call: BwrapCall,
  command: ReadonlyArray<string>,
  bridge?: { readonly socket: string; readonly socat: string }
): CommandLine => asCommandLine(bwrapLaunch(bwrap, policy, call, command, bridge))
