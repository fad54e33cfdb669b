/**
 * Whether the OS sandbox can run here, and which: bubblewrap on Linux, Seatbelt (`sandbox-exec`)
 * on macOS, none elsewhere. Found by running it: bubblewrap may be installed and still refused by
 * the kernel (user namespaces disabled, an AppArmor profile), a Seatbelt profile may use a rule
 * an older macOS does not know, and only a real start tells. The answer names what is missing
 * and how to get it. It is found once per process for each platform and PATH: what it depends on
 * (the programs, the kernel's settings) does not change while we run.
 */
import { execFile } from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { BASE_ARGS } from "./bwrap.ts"
import { seatbeltProbeLine } from "./seatbelt.ts"

export type Availability =
  | {
      readonly available: true
      readonly runner: "bubblewrap"
      readonly bwrap: string
      readonly socat: string | undefined
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

const probeBubblewrap = async (path: string): Promise<Availability> => {
  const bwrap = findProgram("bwrap", path)
  if (bwrap === undefined) {
    return {
      available: false,
      reason: "bubblewrap is not installed (Debian/Ubuntu: apt-get install bubblewrap socat)"
    }
  }
  const probe = await run(bwrap, [...BASE_ARGS, "true"])
  if (probe.code !== 0) {
    return {
      available: false,
      reason: `bubblewrap is installed but cannot start a sandbox here (${probe.stderr || `exit ${probe.code}`}); unprivileged user namespaces may be disabled`
    }
  }
  return { available: true, runner: "bubblewrap", bwrap, socat: findProgram("socat", path) }
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

const probes = new Map<string, Promise<Availability>>()

export const probeSandbox = (
  platform: NodeJS.Platform = process.platform,
  /** Where to look for the sandbox's programs (default: PATH). */
  path = process.env.PATH ?? ""
): Promise<Availability> => {
  const key = `${platform}\0${path}`
  let probe = probes.get(key)
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
    probes.set(key, probe)
  }
  return probe
}
