/**
 * What one sandboxed command may touch, as real absolute paths: the settings' path forms resolved
 * (`~/x` is the home directory, `/x` absolute, anything else relative to the project root), the
 * project root and the session's temp dir writable, their control paths and the never-writable
 * places read-only (guarded.ts), credential files and the secret files inside the writable
 * places hidden (secret-files.ts).
 */
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { credentialPaths } from "./credentials.ts"
import { existingPlaces } from "./existing-places.ts"
import { guardedPlaces, nestedBases } from "./guarded.ts"
import { credentialFilesOf, secretFilesIn } from "./secret-files.ts"
import type { SandboxSettings } from "./settings.ts"

export interface SandboxPolicy {
  /** Writable folders (and files), real paths that exist. */
  readonly writable: ReadonlyArray<string>
  /** Paths that exist and must not be readable inside. */
  readonly readDenied: ReadonlyArray<{ readonly path: string; readonly directory: boolean }>
  /** Paths that exist below a writable one and must stay read-only. */
  readonly writeDenied: ReadonlyArray<string>
  /** Existing folders bound onto themselves, so they cannot be renamed or replaced (guarded.ts). */
  readonly pinned: ReadonlyArray<string>
  /** Missing control paths inside a pinned folder, held by an empty read-only placeholder. */
  readonly placeholders: ReadonlyArray<{ readonly path: string; readonly directory: boolean }>
  /** Every control path below a writable root, existing or not (Seatbelt refuses them by path). */
  readonly controlPaths: ReadonlyArray<string>
  /** The folders on the way to them (`.git`), existing or not (Seatbelt refuses renaming them). */
  readonly controlParents: ReadonlyArray<string>
  /**
   * Every entry with a control path's first name found in the writable roots, at any depth
   * (secret-files.ts's walk): what the audit after the command compares against (control-audit.ts).
   */
  readonly controlNames?: ReadonlyArray<string>
  /** Folders of the writable roots the walk could not list (secret-files.ts `unlisted`). */
  readonly unlistedFolders?: ReadonlyArray<string>
  /** Every folder the same walk went through (control-guard.ts watches them while the command runs). */
  readonly walkedFolders?: ReadonlyArray<string>
  /** Hosts reachable through the proxy; empty: no network at all. */
  readonly allowedDomains: ReadonlyArray<string>
}

export interface PolicyPlaces {
  readonly root: string
  readonly home: string
  /** The session's own temp dir (TMPDIR inside). */
  readonly tempDir: string
  /** Places never writable from inside, even below a writable one (the state folder). */
  readonly neverWritable?: ReadonlyArray<string>
  /** Placeholders made for this command at the top of a writable root (placeholders.ts): read-only whole. */
  readonly held?: ReadonlyArray<string>
}

/**
 * Where host daemons keep their Unix sockets, hidden like credentials (an empty folder over
 * them): /tmp and /run are the sandbox's own already; /var/run when it is a folder of its own
 * rather than the usual link to /run; and below the home folder, the Docker sockets of Docker
 * Desktop, Colima, Lima, Rancher Desktop, OrbStack and Podman's machines.
 */
export const SOCKET_PLACES = ["/var/run"]
export const HOME_SOCKET_PLACES = [
  ".docker/run",
  ".docker/desktop",
  ".colima",
  ".lima",
  ".rd",
  ".orbstack",
  ".local/share/containers/podman/machine"
]

const isRealDirectory = (p: string): boolean => {
  try {
    return NodeFs.lstatSync(p).isDirectory()
  } catch {
    return false
  }
}

/** Thrown when the writable places hold too much to search for secret files. */
export class TooLargeToSearch extends Error {}

/** `~/x` → home, absolute stays, else below the root. */
export const resolveSettingPath = (p: string, places: Pick<PolicyPlaces, "root" | "home">): string =>
  p === "~"
    ? places.home
    : p.startsWith("~/")
      ? NodePath.join(places.home, p.slice(2))
      : NodePath.resolve(places.root, p)

/**
 * The real path of `p` when it exists, else undefined (a missing path needs no hiding). Most of
 * the credential list is missing on any machine: one lstat answers that without an exception
 * (an error object each cost more than the look itself), and realpath(3) runs only for the rest.
 */
const existing = (p: string): string | undefined => {
  try {
    if (NodeFs.lstatSync(p, { throwIfNoEntry: false }) === undefined) return undefined
    return NodeFs.realpathSync.native(p)
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

/** The person's writable places, as real paths that exist: the project and allowWrite. */
export const writableRoots = (
  settings: SandboxSettings,
  places: Pick<PolicyPlaces, "root" | "home">
): Array<string> => [
  ...new Set(realPlaces([places.root, ...settings.allowWrite.map((p) => resolveSettingPath(p, places))]))
]

export const sandboxPolicy = (settings: SandboxSettings, places: PolicyPlaces): SandboxPolicy => {
  const resolve = (p: string) => resolveSettingPath(p, places)
  // The session's temp dir is the sandbox's own, not one of the person's places.
  const roots = writableRoots(settings, places)
  const writable = [...new Set([...roots, ...realPlaces([places.tempDir])])]
  // The long lists of mostly missing paths: looked at again only where their folder changed.
  const credentials = existingPlaces(credentialPaths(places.home))
  const secrets = secretFilesIn(roots, credentialFilesOf(credentials))
  if (!secrets.complete)
    throw new TooLargeToSearch(
      `the writable places hold more files than the sandbox searches for secret files (${roots.join(", ")}); narrow sandbox.filesystem.allowWrite`
    )
  const sockets = [
    ...SOCKET_PLACES.filter(isRealDirectory),
    ...existingPlaces(HOME_SOCKET_PLACES.map((p) => NodePath.join(places.home, p)))
  ]
  const readDenied = [
    ...new Set([...credentials, ...sockets, ...realPlaces(settings.denyRead.map(resolve)), ...secrets.paths])
  ].map((path) => ({ path, directory: isDirectory(path) }))
  const guarded = guardedPlaces(roots, places.neverWritable ?? [], places.held, nestedBases(roots, secrets.controls))
  const writeDenied = [...new Set([...guarded.readOnly, ...realPlaces(settings.denyWrite.map(resolve))])]
  return {
    writable,
    readDenied,
    writeDenied,
    pinned: guarded.pinned,
    placeholders: guarded.placeholders,
    controlPaths: guarded.all,
    controlParents: guarded.parents,
    controlNames: secrets.controls,
    unlistedFolders: secrets.unlisted,
    walkedFolders: secrets.folders,
    allowedDomains: settings.allowedDomains
  }
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
