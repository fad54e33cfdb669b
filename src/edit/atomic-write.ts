/**
 * Writes a file so that a crash, a kill or a full disk leaves either the old content or the
 * new, never a torn file: the bytes go to a temp file (in the project's staging folder when one
 * is given, staging.ts: a crash leaves nothing in the project's own folders), are synced to
 * disk, take the replaced file's permission bits (no set-id bits) and owner — the file the write
 * expects, its entry looked at without following links (`replaced`) — and are renamed over the
 * target. A symlink is written through: its target is replaced and the link stays.
 *
 * The rename goes through the folder opened and checked: on Linux the folder is opened first,
 * its real path read back from /proc/self/fd, and the rename made into /proc/self/fd/<n>/<name>,
 * so a folder swapped for a link after the check cannot redirect the write. The folder opened
 * must also be the folder the permission check saw (its device and inode, CheckedPath.folder),
 * so one renamed into that path since — a path is the same, the folder is not — is refused too;
 * and after the rename the folder must still be at that path, or the write says where it went.
 */
import * as NFS from "node:fs"
import * as NodePath from "node:path"
import { Effect, FileSystem, PlatformError } from "effect"
import type { CheckedEntry } from "../tool/tool.ts"
import { landingPath } from "./landing.ts"
import { freshName, tempDone, tempFor } from "./staging.ts"

const ioError = (method: string, path: string, e: unknown): PlatformError.PlatformError => {
  const code = (e as NodeJS.ErrnoException).code
  return PlatformError.systemError({
    _tag:
      code === "ENOENT"
        ? "NotFound"
        : code === "EACCES" || code === "EPERM"
          ? "PermissionDenied"
          : code === "EEXIST"
            ? "AlreadyExists"
            : code === "EBUSY"
              ? "Busy"
              : "Unknown",
    module: "FileSystem",
    method,
    pathOrDescriptor: path,
    description: (e as Error).message ?? String(e),
    cause: e
  })
}

/** A synchronous node:fs step as an Effect, its error as the PlatformError the tools handle. */
export const io = <A>(method: string, path: string, run: () => A): Effect.Effect<A, PlatformError.PlatformError> =>
  Effect.try({ try: run, catch: (e) => ioError(method, path, e) })

const PROC_FD = "/proc/self/fd"
/** Whether the system names an open descriptor's file (Linux): what the folder checks stand on. */
export const hasProcFd = NFS.existsSync(PROC_FD)

/** The real path of an open descriptor (Linux), or undefined where the system cannot say. */
export const descriptorPath = (fd: number): string | undefined => {
  if (!hasProcFd) return undefined
  try {
    return NFS.readlinkSync(`${PROC_FD}/${fd}`)
  } catch {
    return undefined
  }
}

/**
 * The file a write expects to replace: the same device and inode, and no execute bit it did not
 * have (null: nothing there); undefined: nothing was checked.
 */
export type Expected = CheckedEntry | null | undefined

/** Thrown inside a write when the folder opened is not the one checked: it moved or was swapped. */
export class MovedError extends Error {}

/** The file a write to `path` replaces: where its links lead (landing.ts). */
export const writeTarget = (path: string): string => landingPath(path) ?? path

/** Write `bytes` to a fresh temp, synced, with `mode` (exact, not through the umask). */
const writeTemp = (temp: string, bytes: Uint8Array, mode: number | undefined, owner: NFS.Stats | undefined) => {
  const fd = NFS.openSync(temp, NFS.constants.O_CREAT | NFS.constants.O_EXCL | NFS.constants.O_WRONLY, mode ?? 0o666)
  try {
    let done = 0
    while (done < bytes.length) done += NFS.writeSync(fd, bytes, done, bytes.length - done)
    NFS.fsyncSync(fd)
    if (mode !== undefined) NFS.fchmodSync(fd, mode)
    if (owner !== undefined) {
      try {
        NFS.fchownSync(fd, owner.uid, owner.gid)
      } catch {
        // only root may give a file away; the mode is kept all the same
      }
    }
  } finally {
    NFS.closeSync(fd)
  }
}

/**
 * The file a write to `target` (a real path) replaces, as it is now — its own entry, links not
 * followed — or undefined when there is none. It must be what the write expects: a regular file
 * (not a link or anything else put there since the path was resolved), the same device and
 * inode as `expect`, and no execute bit `expect` did not have (a file made executable after the
 * check would otherwise keep that mode with new content). A file removed since gives way to a
 * new one. Anything else is a MovedError: nothing is written.
 */
const replaced = (target: string, expect: Expected): NFS.Stats | undefined => {
  const st = NFS.lstatSync(target, { throwIfNoEntry: false })
  if (st === undefined) return undefined
  const changed = (what: string) =>
    new MovedError(`${target} ${what} since it was checked; nothing was changed. Call again: it is checked afresh.`)
  if (st.isSymbolicLink()) throw changed("became a symbolic link")
  if (!st.isFile()) throw changed("stopped being a regular file")
  if (expect === null) throw changed("was created by something else")
  if (expect !== undefined && (st.dev !== expect.dev || st.ino !== expect.ino))
    throw changed("was replaced by another file (another name of a different file?)")
  if (expect !== undefined && (st.mode & 0o111) !== 0 && (expect.mode & 0o111) === 0)
    throw changed("was made executable")
  return st
}

/**
 * Writes bytes to a fresh temp file for `target` and syncs it: the first half of a write,
 * for apply_patch, which stages every file before committing any. The temp takes the replaced
 * file's permission bits (never set-user-ID, set-group-ID or sticky) and owner.
 */
export const stageFile = (
  target: string,
  bytes: Uint8Array,
  staging: string | undefined,
  expect?: Expected
): Effect.Effect<string, PlatformError.PlatformError> =>
  io("write", target, () => {
    const existing = replaced(target, expect)
    const temp = staging === undefined ? besideTemp(target) : tempFor(staging, target)
    try {
      writeTemp(temp, bytes, existing === undefined ? undefined : existing.mode & 0o777, existing)
    } catch (e) {
      NFS.rmSync(temp, { force: true })
      throw e
    }
    return temp
  })

const besideTemp = (target: string) =>
  NodePath.join(NodePath.dirname(target), `.${NodePath.basename(target)}.${freshName("tmp")}`)

/**
 * Renames a staged temp onto `target` inside the folder as opened and checked, then syncs the
 * folder (the rename itself made durable). `target` is a real path (writeTarget): the folder
 * opened must still be that folder.
 */
/**
 * Runs `use` with `target`'s folder opened and checked to be the folder meant (its descriptor's
 * own path is `dirname(target)`), handing it the path of `target` inside that opened folder
 * (/proc/self/fd/<n>/<name>), so a folder swapped for a link after the check cannot redirect
 * the change; then syncs the folder. Where the system cannot say (no /proc), `target` itself.
 */
const inCheckedFolder = <E, R>(
  method: string,
  target: string,
  use: (at: string) => Effect.Effect<void, E, R>,
  folder?: CheckedEntry | null
): Effect.Effect<void, E | PlatformError.PlatformError, R> => {
  const dir = NodePath.dirname(target)
  const refuse = (why: string) =>
    io(method, target, () => {
      throw new MovedError(why)
    })
  return Effect.acquireUseRelease(
    io("open", dir, () => {
      try {
        return NFS.openSync(dir, NFS.constants.O_RDONLY | NFS.constants.O_DIRECTORY)
      } catch (e) {
        // A folder checked or just made that is gone: moved away (a racing rename), not "not found".
        if ((e as NodeJS.ErrnoException).code !== "ENOENT" || folder === undefined || folder === null) throw e
        throw new MovedError(
          `the folder ${dir} is gone since it was checked or made (moved away?); nothing was written. Call again: it is checked afresh`
        )
      }
    }),
    (fd) =>
      Effect.gen(function* () {
        const real = descriptorPath(fd)
        if (real !== undefined && real !== dir)
          return yield* refuse(
            `the folder ${dir} changed while it was written to (it now is ${real}); nothing was written`
          )
        // null: the check found no folder there and nothing was made (no /proc): nothing to compare.
        if (folder !== undefined && folder !== null) {
          const st = NFS.fstatSync(fd)
          if (st.dev !== folder.dev || st.ino !== folder.ino)
            return yield* refuse(
              `the folder ${dir} is another folder than the one the permission check saw (one renamed into its place since?); nothing was written. Call again: it is checked afresh`
            )
        }
        yield* use(real === undefined ? target : `${PROC_FD}/${fd}/${NodePath.basename(target)}`)
        // Renamed away meanwhile: the change was made in the folder checked, now elsewhere. Said,
        // not hidden: whatever uses the old path does not see it, and what is at the new one may.
        const after = real === undefined ? undefined : descriptorPath(fd)
        if (after !== undefined && after !== dir)
          return yield* refuse(
            `the folder ${dir} was moved to ${after} while ${NodePath.basename(target)} was written in it; the change was made there, in the folder the permission check saw, not at ${target}. Check ${after}`
          )
        try {
          NFS.fsyncSync(fd)
        } catch {
          // a folder that cannot be synced (some file systems) is as durable as it gets
        }
      }),
    (fd) => Effect.sync(() => NFS.closeSync(fd))
  )
}

export const commitFile = (
  temp: string,
  target: string,
  staging: string | undefined,
  folder?: CheckedEntry | null
): Effect.Effect<void, PlatformError.PlatformError, FileSystem.FileSystem> =>
  Effect.gen(function* () {
    const fs = yield* FileSystem.FileSystem
    yield* inCheckedFolder("rename", target, (at) => fs.rename(temp, at), folder)
    if (staging !== undefined) tempDone(staging, temp)
  }).pipe(Effect.tapError(() => Effect.sync(() => NFS.rmSync(temp, { force: true }))))

/** Removes `target` (a real path) from its folder as opened and checked: never a file elsewhere. */
export const removeFile = (
  target: string,
  folder?: CheckedEntry | null
): Effect.Effect<void, PlatformError.PlatformError> =>
  inCheckedFolder("remove", target, (at) => io("remove", target, () => NFS.rmSync(at, { force: true })), folder)

/**
 * Writes `path` atomically. `staging`: the project's staging folder for the temp file (else it
 * goes beside the target). The rename goes through the FileSystem service.
 */
export const writeFileAtomic = (
  path: string,
  bytes: Uint8Array,
  staging?: string
): Effect.Effect<void, PlatformError.PlatformError, FileSystem.FileSystem> =>
  Effect.suspend(() => {
    const target = writeTarget(NodePath.resolve(path))
    return Effect.flatMap(stageFile(target, bytes, staging), (temp) => commitFile(temp, target, staging))
  })
