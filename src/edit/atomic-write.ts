/**
 * Writes a file so that a crash, a kill or a full disk leaves either the old content or the
 * new, never a torn file: the bytes go to a temp file (in the project's staging folder when one
 * is given, staging.ts: a crash leaves nothing in the project's own folders), are synced to
 * disk, take the old file's mode and owner, and are renamed over the target. A symlink is
 * written through: its target is replaced and the link stays.
 *
 * The rename goes through the folder opened and checked: on Linux the folder is opened first,
 * its real path read back from /proc/self/fd, and the rename made into /proc/self/fd/<n>/<name>,
 * so a folder swapped for a link after the check cannot redirect the write.
 */
import * as NFS from "node:fs"
import * as NodePath from "node:path"
import { Effect, FileSystem, PlatformError } from "effect"
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
const hasProcFd = NFS.existsSync(PROC_FD)

/** The real path of an open descriptor (Linux), or undefined where the system cannot say. */
export const descriptorPath = (fd: number): string | undefined => {
  if (!hasProcFd) return undefined
  try {
    return NFS.readlinkSync(`${PROC_FD}/${fd}`)
  } catch {
    return undefined
  }
}

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
 * Writes bytes to a fresh temp file for `target` and syncs it: the first half of a write,
 * for apply_patch, which stages every file before committing any.
 */
export const stageFile = (
  target: string,
  bytes: Uint8Array,
  staging: string | undefined
): Effect.Effect<string, PlatformError.PlatformError> =>
  io("write", target, () => {
    const existing = NFS.statSync(target, { throwIfNoEntry: false })
    const temp = staging === undefined ? besideTemp(target) : tempFor(staging, target)
    try {
      writeTemp(temp, bytes, existing === undefined ? undefined : existing.mode & 0o7777, existing)
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
export const commitFile = (
  temp: string,
  target: string,
  staging: string | undefined
): Effect.Effect<void, PlatformError.PlatformError, FileSystem.FileSystem> =>
  Effect.gen(function* () {
    const fs = yield* FileSystem.FileSystem
    const dir = NodePath.dirname(target)
    yield* Effect.acquireUseRelease(
      io("open", dir, () => NFS.openSync(dir, NFS.constants.O_RDONLY | NFS.constants.O_DIRECTORY)),
      (fd) =>
        Effect.gen(function* () {
          const real = descriptorPath(fd)
          if (real !== undefined && real !== dir) {
            return yield* io("rename", target, () => {
              throw new MovedError(
                `the folder ${dir} changed while it was written to (it now is ${real}); nothing was written`
              )
            })
          }
          yield* fs.rename(temp, real === undefined ? target : `${PROC_FD}/${fd}/${NodePath.basename(target)}`)
          try {
            NFS.fsyncSync(fd)
          } catch {
            // a folder that cannot be synced (some file systems) is as durable as it gets
          }
        }),
      (fd) => Effect.sync(() => NFS.closeSync(fd))
    )
    if (staging !== undefined) tempDone(staging, temp)
  }).pipe(Effect.tapError(() => Effect.sync(() => NFS.rmSync(temp, { force: true }))))

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
