/**
 * A sandbox policy as a Seatbelt profile, run by macOS's `sandbox-exec`. Everything is refused
 * unless a rule allows it (`deny default`): reading anywhere but the denied paths, writing only
 * inside the writable places (never in a denied one below them), starting programs, and of the
 * system's services only those a shell, a compiler or a test run needs — not Launch Services,
 * which would start an application outside the sandbox. Network: none, or one loopback port,
 * the proxy's.
 *
 * Paths go in as parameters (`-D NAME=path`, read by `(param "NAME")`), never into the profile's
 * text, so no path can change what the profile means. Each rule carries its own exceptions
 * (`require-not`), so no rule depends on which of two overlapping rules Seatbelt lets win.
 */
import type { SandboxPolicy } from "./policy.ts"
import { PROXY_VARIABLES } from "./proxy.ts"

export interface SeatbeltCall {
  readonly cwd: string
  /** Extra writable places for this one call (the output file's folder). */
  readonly writable: ReadonlyArray<string>
  /** TMPDIR inside. */
  readonly tempDir: string
  /** The proxy's loopback port, the one address a command may connect to. */
  readonly proxyPort?: number
}

export interface SeatbeltProfile {
  readonly profile: string
  /** The profile's parameters, NAME → path. */
  readonly params: ReadonlyArray<readonly [string, string]>
}

/** What every profile allows, whatever the policy. */
export const BASE_PROFILE = `(version 1)
(deny default)
; programs, and what they start: children keep this same profile
(allow process-exec)
(allow process-fork)
(allow signal (target same-sandbox))
(allow process-info* (target same-sandbox))
; what programs ask about the machine (CPU count, page size, OS version)
(allow sysctl-read)
(allow mach-host*)
; the JVM reads its CPU type through a write call
(allow sysctl-write (sysctl-name "kern.grade_cputype"))
(allow user-preference-read)
; semaphores and shared memory (Python's multiprocessing)
(allow ipc-posix-sem)
(allow ipc-posix-shm)
(allow mach-lookup
  ; who a user is (getpwuid, ~)
  (global-name "com.apple.system.opendirectoryd.libinfo")
  (global-name "com.apple.system.opendirectoryd.membership")
  ; preferences
  (global-name "com.apple.cfprefsd.daemon")
  (global-name "com.apple.cfprefsd.agent")
  ; certificate checks, for HTTPS through the proxy
  (global-name "com.apple.trustd.agent")
  (global-name "com.apple.SecurityServer")
  (global-name "com.apple.ocspd")
  ; the per-user temp and cache folders' names, and logging
  (global-name "com.apple.bsd.dirhelper")
  (global-name "com.apple.system.logger")
  (global-name "com.apple.logd"))
(allow file-map-executable)
(allow file-read* file-write* file-ioctl
  (literal "/dev/null")
  (literal "/dev/zero")
  (literal "/dev/dtracehelper")
  (literal "/dev/stdout")
  (literal "/dev/stderr")
  (subpath "/dev/fd"))
; terminals a command opens itself (script, expect); the person's own terminal stays out of reach
(allow pseudo-tty)
(allow file-read* file-write* file-ioctl (literal "/dev/ptmx"))
(allow file-read* file-write* file-ioctl
  (require-all (regex #"^/dev/ttys[0-9]+$") (extension "com.apple.sandbox.pty")))
`

/** `(subpath (param "NAME"))` for each path, the parameters named PREFIX_0, PREFIX_1, … */
const named = (prefix: string, paths: ReadonlyArray<string>) =>
  paths.map((path, i) => ({ name: `${prefix}_${i}`, path, rule: `(subpath (param "${prefix}_${i}"))` }))

export const seatbeltProfile = (policy: SandboxPolicy, call: SeatbeltCall): SeatbeltProfile => {
  const writable = named("WRITABLE", [...new Set([...policy.writable, ...call.writable])])
  const readDenied = named(
    "DENY_READ",
    policy.readDenied.map((d) => d.path)
  )
  // Control paths are refused by path, existing or not, so a new one cannot be made either.
  const writeDenied = named("DENY_WRITE", [...new Set([...policy.writeDenied, ...policy.controlPaths])])
  // The folders that lead to them may be written in, never renamed, removed or replaced.
  const pinned = policy.controlParents.map((path, i) => ({
    name: `PINNED_${i}`,
    path,
    rule: `(literal (param "PINNED_${i}"))`
  }))
  const rules = [BASE_PROFILE]
  // A hidden path is neither readable nor writable; a read-only one only not writable.
  const notRead = readDenied.map((d) => `(require-not ${d.rule})`)
  const notWritten = [...notRead, ...[...writeDenied, ...pinned].map((d) => `(require-not ${d.rule})`)]
  rules.push(notRead.length === 0 ? "(allow file-read*)" : `(allow file-read*\n  (require-all ${notRead.join(" ")}))`)
  if (writable.length > 0) {
    const places = writable.map((w) => w.rule).join(" ")
    rules.push(
      notWritten.length === 0
        ? `(allow file-write* ${places})`
        : `(allow file-write*\n  (require-all (require-any ${places}) ${notWritten.join(" ")}))`
    )
  }
  if (call.proxyPort !== undefined) {
    // A number we chose, not the caller's text: safe inside the profile.
    rules.push(`(allow network-outbound (remote ip "localhost:${Math.trunc(call.proxyPort)}"))`)
  }
  return {
    profile: `${rules.join("\n")}\n`,
    params: [...writable, ...readDenied, ...writeDenied, ...pinned].map((p) => [p.name, p.path] as const)
  }
}

/**
 * Inside: into the call's folder, TMPDIR set, and with a proxy port the proxy variables pointing
 * at it; then the command. `sandbox-exec` has no options for these, so a shell does them.
 */
const PRELUDE = [
  'cd "$1" || exit 126',
  'export TMPDIR="$2"',
  `if [ -n "$3" ]; then export ${PROXY_VARIABLES.map((v) => `${v}="$3"`).join(" ")}; unset NO_PROXY no_proxy; fi`,
  "shift 3",
  'exec "$@"'
].join("\n")

/** The whole command line that runs `command` under Seatbelt. */
export const seatbeltLine = (
  sandboxExec: string,
  policy: SandboxPolicy,
  call: SeatbeltCall,
  command: ReadonlyArray<string>
): readonly [string, ...Array<string>] => {
  const { profile, params } = seatbeltProfile(policy, call)
  const proxy = call.proxyPort === undefined ? "" : `http://127.0.0.1:${call.proxyPort}`
  return [
    sandboxExec,
    "-p",
    profile,
    ...params.flatMap(([name, path]) => ["-D", `${name}=${path}`]),
    "--",
    "/bin/sh",
    "-c",
    PRELUDE,
    "sandbox",
    call.cwd,
    call.tempDir,
    proxy,
    ...command
  ]
}

/**
 * The probe's command line: `true` under a profile with one place of every kind and a proxy
 * port, so a macOS that refuses any form the real profiles use reports the sandbox unavailable
 * instead of failing every command.
 */
export const seatbeltProbeLine = (sandboxExec: string): readonly [string, ...Array<string>] =>
  seatbeltLine(
    sandboxExec,
    {
      writable: ["/private/tmp"],
      readDenied: [{ path: "/private/var/empty/.probe", directory: false }],
      writeDenied: ["/private/tmp/.probe"],
      pinned: [],
      placeholders: [],
      controlPaths: ["/private/tmp/.probe-control"],
      controlParents: ["/private/tmp/.probe-parent"],
      allowedDomains: []
    },
    { cwd: "/", writable: [], tempDir: "/private/tmp", proxyPort: 1 },
    ["/usr/bin/true"]
  )
