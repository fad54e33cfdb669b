/**
 * Where a path really is. Every path a call touches is resolved with symlinks followed (for a
 * file that does not exist yet, its deepest existing ancestor is resolved and the rest
 * appended), so `..`, absolute paths and symlinks that lead out of the project are all caught
 * by one check: is the real path inside the project root or an additional directory?
 */
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { Effect } from "effect"
import type { LocalFsShape } from "../fs/local-fs.ts"
import { isCleanAbsolute } from "../path/path.ts"
import { credentialPaths, hasSecretName, isCredentialPath } from "../sandbox/credentials.ts"
import { credentialFilesOf, secretTwinAt, secretTwinOf } from "../sandbox/secret-files.ts"

/** What realPath needs: LocalFs, or effect's FileSystem (the edit tools' lock has one). */
export interface RealPaths {
  readonly realPath: (path: string) => Effect.Effect<string, unknown>
  /** Where a link points; a failure or undefined: no link there. */
  readonly readLink: (path: string) => Effect.Effect<string | undefined, unknown>
}

/** The real path of `abs`, following symlinks as far as the path exists. */
export const realPath = (fs: RealPaths, abs: string): Effect.Effect<string> => {
  const resolved = isCleanAbsolute(abs) ? abs : NodePath.resolve(abs)
  // Most paths exist: one realpath(3), and the walk up only when it fails.
  return Effect.catch(fs.realPath(resolved), () => realPathOfMissing(fs, resolved))
}

/**
 * The real path of `abs`, when `base` is a real path (the project root, resolved when the system
 * started): a path below it is real when none of its components below `base` is a symbolic
 * link, one lstat each on a local disk (LocalFs.linkFreeBelow). realpath(3) looks up every
 * component from `/`, each again from the start: /home/me/project/src/a.ts costs it five lookups
 * where this makes two. A link, a missing component or any doubt hands the path to `realPath`,
 * which says what it is.
 */
export const realPathBelow = (fs: LocalFsShape, base: string, abs: string): Effect.Effect<string> => {
  if (abs === base) return Effect.succeed(abs)
  const from = base === "/" ? 0 : base.length
  if (!isCleanAbsolute(abs) || !abs.startsWith(base) || abs.charCodeAt(from) !== SLASH) return realPath(fs, abs)
  return Effect.suspend(() => (fs.linkFreeBelow(base, abs) ? Effect.succeed(abs) : realPath(fs, abs)))
}

const SLASH = "/".charCodeAt(0)

/** More links than this while resolving one path is a loop (as the kernel's ELOOP). */
const MAX_LINKS = 40

/**
 * A path that does not exist (yet): its deepest existing ancestor, resolved, and the rest —
 * except that a dangling link on the way is followed, the last component too, since a write
 * through it creates the file at its target (what src/edit/landing.ts lands a write on). A
 * loop of links is taken as it is (the write itself refuses it).
 */
const realPathOfMissing = Effect.fnUntraced(function* (fs: RealPaths, abs: string): Effect.fn.Return<string> {
  let path = abs
  let links = 0
  for (;;) {
    const missing: Array<string> = []
    let at = path
    let next: string | undefined
    for (;;) {
      const link = yield* Effect.orElseSucceed(fs.readLink(at), () => undefined)
      if (link !== undefined) {
        next = NodePath.resolve(NodePath.dirname(at), link, ...missing.reverse())
        break
      }
      // `abs` itself was just tried by the caller: start asking realpath(3) from its parent.
      const real = at === abs ? undefined : yield* Effect.option(fs.realPath(at))
      if (real !== undefined && real._tag === "Some")
        return missing.length === 0 ? real.value : NodePath.join(real.value, ...missing.reverse())
      const parent = NodePath.dirname(at)
      if (parent === at) return NodePath.resolve(path)
      missing.push(NodePath.basename(at))
      at = parent
    }
    if (++links > MAX_LINKS) return NodePath.resolve(path)
    path = next
    const whole = yield* Effect.option(fs.realPath(path))
    if (whole._tag === "Some") return whole.value
  }
})

/** True when `abs` is `dir` or lies below it (both already resolved). */
export const within = (dir: string, abs: string): boolean =>
  abs === dir || abs.startsWith(dir.endsWith("/") ? dir : `${dir}/`)

/**
 * Files whose reading asks by default: a secret's name in any folder (`.env`, `.env.local`,
 * `.envrc`, `*.pem`, `*.key`, SSH private keys, … without case: src/sandbox/credentials.ts's
 * `isSecretName`, the rule the sandbox hides by too) and the credential places below the home
 * folder. Tested on the last name only, and only for a name that can match: a search tests
 * every name it lists.
 */
export const isSensitive = (abs: string): boolean => {
  // A file another process holds open after it was removed reads, through /proc/PID/fd/N, as
  // `<its path> (deleted)`: still that file.
  const path = abs.endsWith(DELETED) ? abs.slice(0, -DELETED.length) : abs
  return hasSecretName(path) || isCredentialPath(path, HOME)
}

const DELETED = " (deleted)"

/** Credential files below the home directory (src/sandbox/credentials.ts) ask too, wherever the root is. */
const HOME = NodeOs.homedir()

/** The home credential list's files (a folder's, one level down): a hard link to one is that secret. */
const homeCredentialFiles = () => credentialFilesOf(credentialPaths(HOME))

/**
 * The secret that the file at `abs` is another name of (a hard link to a secret-named file below
 * `roots`, or to a home credential file), or undefined; one lstat for a file with one name.
 */
export const secretTwin = (abs: string, roots: ReadonlyArray<string>): string | undefined =>
  secretTwinAt(abs, roots, homeCredentialFiles)

/**
 * The same for the file a write's check recorded (subjects.ts's entry): decided from that one
 * look, not a second one that a swap between the two could make see another file. Its link
 * count is not kept, so the set of secrets is always asked.
 */
export const checkedSecretTwin = (
  entry: { readonly dev: number; readonly ino: number },
  roots: ReadonlyArray<string>
): string | undefined => secretTwinOf({ dev: entry.dev, ino: entry.ino, links: 2 }, roots, homeCredentialFiles)

/** The same for a file already opened, by what its fstat said: no second look at the path. */
export const openedSecretTwin = (
  identity:
    | { readonly dev: number; readonly ino: number; readonly links: number; readonly mounted?: boolean }
    | undefined,
  roots: ReadonlyArray<string>
): string | undefined => (identity === undefined ? undefined : secretTwinOf(identity, roots, homeCredentialFiles))

/**
 * What the read-only command list asks of the file system, synchronously (decide.ts is one
 * synchronous pass): a path's real path — links followed; for a missing path its deepest existing
 * ancestor's, the rest appended; a dangling link judged by where it points —, whether it is a
 * folder, and a folder's names.
 */
export const shellFiles = {
  real: (abs: string): string => realPathSync(abs, 0),
  directory: (abs: string): boolean => {
    try {
      return NodeFs.statSync(abs).isDirectory()
    } catch {
      return false
    }
  },
  list: (abs: string): ReadonlyArray<string> | undefined => {
    try {
      return NodeFs.readdirSync(abs)
    } catch {
      return undefined
    }
  }
}

const realPathSync = (abs: string, links: number): string => {
  try {
    return NodeFs.realpathSync.native(abs)
  } catch {
    const parent = NodePath.dirname(abs)
    if (parent === abs || links > MAX_LINKS) return abs
    let target: string | undefined
    try {
      target = NodeFs.readlinkSync(abs)
    } catch {
      target = undefined
    }
    return target === undefined
      ? NodePath.join(realPathSync(parent, links), NodePath.basename(abs))
      : realPathSync(NodePath.resolve(parent, target), links + 1)
  }
}
