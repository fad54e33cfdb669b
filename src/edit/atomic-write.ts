/**
 * Writes a file so that a crash, a kill or a full disk leaves either the old content or the
 * new, never a torn file: the bytes go to a temp file in the same folder (same file system,
 * so the rename is atomic), are synced to disk, take the old file's mode, and are renamed over
 * the target. A symlink is written through: its target is replaced and the link stays.
 */
import * as NodePath from "node:path"
import { Effect, FileSystem, type PlatformError } from "effect"
import * as NativeFs from "../fs/native.ts"

/** The file a write to `path` must replace: `path`, or where its symlink chain ends. */
export const writeTarget = (
  fs: FileSystem.FileSystem,
  path: string
): Effect.Effect<string, PlatformError.PlatformError> =>
  Effect.gen(function* () {
    const info = yield* fs.lstat(path).pipe(Effect.option)
    if (info._tag === "None" || info.value.type !== "SymbolicLink") return path
    const real = yield* NativeFs.realPath(path).pipe(Effect.option)
    if (real._tag === "Some") return real.value
    // A dangling link: create its target.
    const link = yield* fs.readLink(path)
    return NodePath.resolve(NodePath.dirname(path), link)
  })

let counter = 0
const tempName = (target: string) =>
  NodePath.join(
    NodePath.dirname(target),
    `.${NodePath.basename(target)}.${process.pid}.${Date.now().toString(36)}${(counter++).toString(36)}.tmp`
  )

export const writeFileAtomic = (
  path: string,
  bytes: Uint8Array
): Effect.Effect<void, PlatformError.PlatformError, FileSystem.FileSystem> =>
  Effect.gen(function* () {
    const fs = yield* FileSystem.FileSystem
    const target = yield* writeTarget(fs, path)
    const existing = yield* fs.stat(target).pipe(Effect.option)
    const mode = existing._tag === "Some" ? existing.value.mode & 0o7777 : undefined
    const temp = tempName(target)
    const write = Effect.gen(function* () {
      yield* Effect.scoped(
        Effect.gen(function* () {
          const file = yield* fs.open(temp, { flag: "wx", mode: mode ?? 0o666 })
          yield* file.writeAll(bytes)
          yield* file.sync
        })
      )
      // open's mode passes through the umask; the old file's mode is restored exactly.
      if (mode !== undefined) yield* fs.chmod(temp, mode)
      if (existing._tag === "Some") {
        const { uid, gid } = existing.value
        if (uid._tag === "Some" && gid._tag === "Some") yield* fs.chown(temp, uid.value, gid.value).pipe(Effect.ignore)
      }
      yield* fs.rename(temp, target)
    })
    yield* write.pipe(Effect.onError(() => fs.remove(temp, { force: true }).pipe(Effect.ignore)))
    // Make the rename itself durable.
    yield* Effect.scoped(Effect.flatMap(fs.open(NodePath.dirname(target), { flag: "r" }), (dir) => dir.sync)).pipe(
      Effect.ignore
    )
  })
