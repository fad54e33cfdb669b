/**
 * Whether the OS sandbox can run here, found once by running it: bubblewrap may be installed and
 * still refused by the kernel (user namespaces disabled, an AppArmor profile), and only a real
 * start tells. The answer names what is missing and how to get it.
 */
import { execFile } from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { BASE_ARGS } from "./bwrap.ts"

export type Availability =
  | { readonly available: true; readonly bwrap: string; readonly socat: string | undefined }
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

export const probeSandbox = async (
  platform: NodeJS.Platform = process.platform,
  /** Where to look for bubblewrap and socat (default: PATH). */
  path = process.env.PATH ?? ""
): Promise<Availability> => {
  if (platform !== "linux") {
    return {
      available: false,
      reason:
        platform === "darwin"
          ? "the macOS sandbox (sandbox-exec) is not supported yet; commands run under the permission rules"
          : `no OS sandbox on ${platform}; commands run under the permission rules`
    }
  }
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
  return { available: true, bwrap, socat: findProgram("socat", path) }
}
