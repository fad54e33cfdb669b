/**
 * Running a shell script inside the real sandbox, as this user (root here and in CI) or as
 * `nobody`: the command line comes from the same policy and arguments bash uses
 * (sandboxPolicy, bwrapLine), with the filter in a file both can read.
 */
import { execFileSync, spawnSync } from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { type Availability, findProgram, probeSandbox } from "../../src/sandbox/availability.ts"
import { bwrapLine } from "../../src/sandbox/bwrap.ts"
import { sandboxPolicy } from "../../src/sandbox/policy.ts"
import { seccompFilter } from "../../src/sandbox/seccomp.ts"
import { resolveSandboxSettings, type SandboxConfig } from "../../src/sandbox/settings.ts"

export const availability: Availability = await probeSandbox()
export const bubblewrap = availability.available && availability.runner === "bubblewrap" ? availability : undefined

/** Linux with bubblewrap (CI installs it, so there it must run). */
export const runnable = process.platform === "linux" && (bubblewrap !== undefined || process.env.CI !== undefined)

/** Whether `nobody` can be switched to here (root, with setpriv). */
export const canBeNobody = process.getuid?.() === 0 && findProgram("setpriv") !== undefined

/** The two users every boundary test runs as: root, and `nobody` where it can be switched to. */
export const users = [
  { who: "root", asNobody: false, skip: process.getuid?.() !== 0 },
  { who: "nobody", asNobody: true, skip: !canBeNobody }
]

/** git run by the tests: a fixed identity, no system config. */
export const GIT_ENV = {
  GIT_AUTHOR_NAME: "t",
  GIT_AUTHOR_EMAIL: "t@example.com",
  GIT_COMMITTER_NAME: "t",
  GIT_COMMITTER_EMAIL: "t@example.com",
  GIT_CONFIG_NOSYSTEM: "1"
}

/**
 * A layer's bubblewrap line run as `nobody`: setpriv before bwrap, so the host side (the filter's
 * and info file's descriptors) stays this user's. The layer's session temp dir is this user's
 * (0700): it is opened to nobody, as theirs would be.
 */
export const asUser = (line: ReadonlyArray<string>, asNobody: boolean): Array<string> => {
  if (!asNobody) return [...line]
  const tempDir = line[line.indexOf("TMPDIR") + 1]!
  NodeFs.chmodSync(NodePath.dirname(tempDir), 0o755)
  NodeFs.chmodSync(tempDir, 0o777)
  const at = line.findIndex((w) => w.endsWith("/bwrap"))
  return [...line.slice(0, at), "setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", ...line.slice(at)]
}

/** Outside the sandbox's fresh /tmp: what is made here is the host's, seen read-only inside. */
export const hostBase = NodeFs.existsSync("/var/tmp") ? "/var/tmp" : NodeOs.tmpdir()

const made: Array<string> = []
export const cleanUp = () => {
  for (const dir of made.splice(0)) NodeFs.rmSync(dir, { recursive: true, force: true })
}

/** A new folder under `base`, open to `nobody` when `forNobody`. */
export const folder = (prefix: string, forNobody = false, base = hostBase): string => {
  const dir = NodeFs.realpathSync(NodeFs.mkdtempSync(NodePath.join(base, prefix)))
  made.push(dir)
  if (forNobody) NodeFs.chmodSync(dir, 0o755)
  return dir
}

/** Hands everything below `dir` to `nobody` (uid and gid 65534). */
export const giveToNobody = (dir: string) => {
  execFileSync("chown", ["-R", "65534:65534", dir])
}

export interface Inside {
  readonly root: string
  readonly home: string
  readonly tempDir: string
  readonly config?: SandboxConfig
  readonly neverWritable?: ReadonlyArray<string>
  readonly asNobody?: boolean
  readonly env?: Record<string, string>
}

let filterFile: string | undefined
const filter = (): string | undefined => {
  const bytes = seccompFilter()
  if (bytes === undefined || bubblewrap?.seccomp !== true) return undefined
  if (filterFile === undefined) {
    const dir = folder("freecode-filter-", true)
    filterFile = NodePath.join(dir, "seccomp.bpf")
    NodeFs.writeFileSync(filterFile, bytes, { mode: 0o644 })
  }
  return filterFile
}

let empty: string | undefined
const emptyFile = (): string => {
  if (empty === undefined) {
    empty = NodePath.join(folder("freecode-empty-", true), "empty")
    NodeFs.writeFileSync(empty, "", { mode: 0o444 })
  }
  return empty
}

/** Runs `script` with /bin/bash inside the sandbox; stdout and stderr together, and the exit code. */
export const inside = (script: string, at: Inside): { readonly output: string; readonly code: number } => {
  if (bubblewrap === undefined) throw new Error("bubblewrap is needed here")
  const policy = sandboxPolicy(resolveSandboxSettings({ enabled: true, ...at.config }, false), {
    root: at.root,
    home: at.home,
    tempDir: at.tempDir,
    neverWritable: at.neverWritable ?? []
  })
  const [program, ...args] = bwrapLine(
    bubblewrap.bwrap,
    policy,
    {
      cwd: at.root,
      writable: [],
      tempDir: at.tempDir,
      hardening: { seccompFile: filter(), disableUserns: bubblewrap.disableUserns },
      emptyFile: emptyFile()
    },
    ["/bin/bash", "-c", 'exec 2>&1; eval "$1"', "script", script]
  )
  const line =
    at.asNobody === true
      ? ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", program, ...args]
      : [program, ...args]
  const r = spawnSync(line[0]!, line.slice(1), {
    encoding: "utf8",
    timeout: 30_000,
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: at.home, ...at.env }
  })
  return { output: `${r.stdout}${r.stderr}`, code: r.status ?? -1 }
}
