/**
 * Whether the OS sandbox can run here, and which: bubblewrap on Linux, Seatbelt (`sandbox-exec`)
 * on macOS, none elsewhere. Found by running it: bubblewrap may be installed and still refused by
 * the kernel (user namespaces disabled, an AppArmor profile), a Seatbelt profile may use a rule
 * an older macOS does not know, and only a real start tells. The answer names what is missing
 * and how to get it. It is found once per process for each platform and PATH: what it depends on
 * (the programs, the kernel's settings) does not change while we run.
 */
import { execFile, spawn } from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { processWide } from "../process-wide/process-wide.ts"
import { hardenedArgs } from "./bwrap.ts"
import { seatbeltProbeLine } from "./seatbelt.ts"
import { seccompFilter } from "./seccomp.ts"

export type Availability =
  | {
      readonly available: true
      readonly runner: "bubblewrap"
      readonly bwrap: string
      readonly socat: string | undefined
      /** `--disable-userns` works (bubblewrap 0.8 and later). */
      readonly disableUserns: boolean
      /** The system-call filter loads (seccomp.ts); false on an architecture it has no table for. */
      readonly seccomp: boolean
    }
  | { readonly available: true; readonly runner: "seatbelt"; readonly sandboxExec: string }
  | { readonly available: false; readonly reason: string }

/** The first executable `name` on PATH (then the usual system folders). */
export const findProgram = (name: string, path = process.env.PATH ?? ""): string | undefined => {
  for (const dir of path.split(":")) {
    if (dir === "") continue
    const file = NodePath.join(dir, name)
    try {
      NodeFs.accessSync(file, NodeFs.constants.X_OK)
      return file
    } catch {}
  }
  return undefined
}

const run = (file: string, args: ReadonlyArray<string>): Promise<{ code: number; stderr: string }> =>
  new Promise((resolve) => {
    execFile(file, args, { timeout: 10_000 }, (error, _stdout, stderr) => {
      const code = error === null ? 0 : typeof error.code === "number" ? error.code : 1
      resolve({ code, stderr: String(stderr).trim() })
    })
  })

/**
 * Inside the probe: exit 0 only when the command has no capability at all (effective, permitted,
 * bounding), no_new_privs is set and, with a filter, seccomp is on. Read with the shell alone.
 */
const CHECK = `want=$1; ok=0
while read -r k v; do case $k in
  CapEff:|CapPrm:|CapBnd:) case $v in *[!0]*) exit 3;; esac; ok=$((ok+1));;
  NoNewPrivs:) [ "$v" = 1 ] || exit 4; ok=$((ok+1));;
  Seccomp:) [ "$want" = 0 ] || [ "$v" = 2 ] || exit 5;;
esac; done </proc/self/status
[ "$ok" = 4 ] || exit 6`

/** bubblewrap with the filter written into fd 3. */
const runWithFilter = (file: string, args: ReadonlyArray<string>, filter: Buffer | undefined) =>
  new Promise<{ code: number; stderr: string }>((resolve) => {
    const child = spawn(file, args, { stdio: ["ignore", "ignore", "pipe", "pipe"], timeout: 10_000 })
    let stderr = ""
    child.stderr?.on("data", (b: Buffer) => (stderr += b.toString()))
    const fd3 = child.stdio[3] as NodeJS.WritableStream | null
    fd3?.on("error", () => undefined) // bubblewrap gone before reading it: its exit says why
    fd3?.end(filter ?? Buffer.alloc(0))
    child.on("error", (e) => resolve({ code: 1, stderr: e.message }))
    child.on("close", (code) => resolve({ code: code ?? 1, stderr: stderr.trim() }))
  })

const probeBubblewrap = async (path: string): Promise<Availability> => {
  const bwrap = findProgram("bwrap", path)
  if (bwrap === undefined) {
    return {
      available: false,
      reason: "bubblewrap is not installed (Debian/Ubuntu: apt-get install bubblewrap socat)"
    }
  }
  const filter = seccompFilter()
  const attempt = (disableUserns: boolean) =>
    runWithFilter(
      bwrap,
      [
        ...hardenedArgs({ seccompFile: filter === undefined ? undefined : "probe", disableUserns }),
        "/bin/sh",
        "-c",
        CHECK,
        "check",
        filter === undefined ? "0" : "1"
      ],
      filter
    )
  let disableUserns = true
  let probe = await attempt(true)
  // bubblewrap before 0.8 has no --disable-userns, and a kernel may refuse the nested namespace
  // it makes; the filter refuses new namespaces all the same.
  if (probe.code !== 0) {
    disableUserns = false
    probe = await attempt(false)
  }
  if (probe.code >= 3 && probe.code <= 6) {
    return {
      available: false,
      reason: `bubblewrap starts here, but a command inside would keep capabilities or escape the system-call filter (check ${probe.code}); update bubblewrap`
    }
  }
  if (probe.code !== 0) {
    return {
      available: false,
      reason: `bubblewrap is installed but cannot start a sandbox here (${probe.stderr || `exit ${probe.code}`}); unprivileged user namespaces may be disabled`
    }
  }
  return {
    available: true,
    runner: "bubblewrap",
    bwrap,
    socat: findProgram("socat", path),
    disableUserns,
    seccomp: filter !== undefined
  }
}

const probeSeatbelt = async (path: string): Promise<Availability> => {
  // Part of macOS itself: /usr/bin first, so a program of the same name earlier on PATH is not taken.
  const sandboxExec = findProgram("sandbox-exec", `/usr/bin:${path}`)
  if (sandboxExec === undefined) return { available: false, reason: "sandbox-exec is not on this Mac" }
  const [program, ...args] = seatbeltProbeLine(sandboxExec)
  const probe = await run(program, args)
  if (probe.code !== 0) {
    return {
      available: false,
      reason: `sandbox-exec cannot start a sandbox here (${probe.stderr || `exit ${probe.code}`})`
    }
  }
  return { available: true, runner: "seatbelt", sandboxExec }
}

/** One probe per platform and PATH for the process (src/process-wide): it starts a sandbox. */
const probes = processWide("sandbox probes", () => new Map<string, Promise<Availability>>())

export const probeSandbox = (
  platform: NodeJS.Platform = process.platform,
  /** Where to look for the sandbox's programs (default: PATH). */
  path = process.env.PATH ?? ""
): Promise<Availability> => {
  const key = `${platform}\0${path}`
  let probe = probes.get().get(key)
  if (probe === undefined) {
    probe =
      platform === "linux"
        ? probeBubblewrap(path)
        : platform === "darwin"
          ? probeSeatbelt(path)
          : Promise.resolve({
              available: false,
              reason: `no OS sandbox on ${platform} (bubblewrap on Linux, Seatbelt on macOS); commands run under the permission rules`
            })
    probes.get().set(key, probe)
  }
  return probe
}
