/**
 * What one sandboxed command may touch, as real absolute paths: the settings' path forms resolved
 * (`~/x` is the home directory, `/x` absolute, anything else relative to the project root), the
 * project root and the session's temp dir writable, credential files hidden.
 */
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { credentialPaths } from "./credentials.ts"
import type { SandboxSettings } from "./settings.ts"

export interface SandboxPolicy {
  /** Writable folders (and files), real paths that exist. */
  readonly writable: ReadonlyArray<string>
  /** Paths that exist and must not be readable inside. */
  readonly readDenied: ReadonlyArray<{ readonly path: string; readonly directory: boolean }>
  /** Paths that exist below a writable one and must stay read-only. */
  readonly writeDenied: ReadonlyArray<string>
  /** Hosts reachable through the proxy; empty: no network at all. */
  readonly allowedDomains: ReadonlyArray<string>
}

export interface PolicyPlaces {
  readonly root: string
  readonly home: string
  /** The session's own temp dir (TMPDIR inside). */
  readonly tempDir: string
}

/** `~/x` → home, absolute stays, else below the root. */
export const resolveSettingPath = (p: string, places: Pick<PolicyPlaces, "root" | "home">): string =>
  p === "~"
    ? places.home
    : p.startsWith("~/")
      ? NodePath.join(places.home, p.slice(2))
      : NodePath.resolve(places.root, p)

/** The real path of `p` when it exists, else undefined (a missing path needs no hiding). */
const existing = (p: string): string | undefined => {
  try {
    return NodeFs.realpathSync(p)
  } catch {
    return undefined
  }
}

/**
 * The real paths of those of `paths` that exist: Seatbelt matches real paths only (macOS's /var
 * and /tmp are links into /private), and bubblewrap cannot bind a missing one.
 */
export const realPlaces = (paths: ReadonlyArray<string>): Array<string> =>
  paths.map(existing).filter((p): p is string => p !== undefined)

const isDirectory = (p: string): boolean => {
  try {
    return NodeFs.statSync(p).isDirectory()
  } catch {
    return false
  }
}

export const sandboxPolicy = (settings: SandboxSettings, places: PolicyPlaces): SandboxPolicy => {
  const resolve = (p: string) => resolveSettingPath(p, places)
  const writable = realPlaces([places.root, places.tempDir, ...settings.allowWrite.map(resolve)])
  const readDenied = realPlaces([...credentialPaths(places.home), ...settings.denyRead.map(resolve)]).map((path) => ({
    path,
    directory: isDirectory(path)
  }))
  const writeDenied = realPlaces(settings.denyWrite.map(resolve))
  return { writable: [...new Set(writable)], readDenied, writeDenied, allowedDomains: settings.allowedDomains }
}

/** True when `host` is allowed by one of `domains` (`example.com`, or `*.example.com` for its subdomains). */
export const domainAllowed = (domains: ReadonlyArray<string>, host: string): boolean => {
  const h = host.toLowerCase().replace(/\.$/, "")
  return domains.some((d) => {
    const domain = d.toLowerCase()
    if (domain.startsWith("*.")) return h.endsWith(domain.slice(1)) && h.length > domain.length - 1
    return h === domain
  })
}
