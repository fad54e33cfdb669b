/**
 * The platform WriteFs layer: every call through effect's `FileSystem` service, so write, edit
 * and apply_patch change whatever file system is provided (an in-memory one in a test or an
 * embedder). What it keeps of the native layer's guarantees, and why:
 *
 * - One writer per file: the transaction's in-process lock per real path
 *   (ReadState.withPathLock), shared by every system in the process (two tool systems over one
 *   in-memory project queue on the same locks). A FileSystem has no lock other processes
 *   honour, so there is nothing more to take; an in-memory one has no other process.
 * - A write never torn: a temp beside the target, given the old file's mode, renamed over it.
 * - A patch all or nothing: the same commit as the native layer's (patch-commit.ts), every file
 *   put back when one fails; no journal, so a crash half-way is not rolled forward (nothing
 *   of an in-memory file system outlives the process).
 */
import * as NodePath from "node:path"
import { Effect, type FileSystem, Option, PlatformError } from "effect"
import { fingerprint } from "../read-state/fingerprint.ts"
import { landingPathWith } from "./landing.ts"
import { type CommitSteps, commitWith } from "./patch-commit.ts"
import type { FileKind, LoadedFile, WriteSteps } from "./write-fs-shape.ts"

const kindOf = (type: FileSystem.File.Type): FileKind =>
  type === "File" || type === "Directory" || type === "SymbolicLink" ? type : "Other"

const mtimeOf = (info: FileSystem.File.Info): number | undefined =>
  Option.match(info.mtime, { onNone: () => undefined, onSome: (d) => d.getTime() })

const moved = (target: string) =>
  PlatformError.systemError({
    _tag: "BadResource",
    module: "FileSystem",
    method: "open",
    pathOrDescriptor: target,
    description: `${target} became a symbolic link while it was being changed; nothing was changed`
  })

/** A fresh temp name beside `target`: unique across layers over one FileSystem too. */
const tempBeside = (target: string) =>
  `${NodePath.posix.dirname(target)}/.${NodePath.posix.basename(target)}.${Date.now().toString(36)}${Math.random().toString(36).slice(2, 10)}.tmp`

export const platformWriteSteps = (fs: FileSystem.FileSystem): WriteSteps => {
  /** landing.ts's walk, each component asked of the FileSystem (lstat, then readLink for a link). */
  const landing = (abs: string): Effect.Effect<string | undefined> =>
    landingPathWith(abs, (path) =>
      Effect.gen(function* () {
        const info = yield* Effect.option(fs.lstat(path))
        if (Option.isNone(info)) return "missing" as const
        if (info.value.type !== "SymbolicLink") return "plain" as const
        const target = yield* Effect.option(fs.readLink(path))
        return Option.isSome(target) ? { link: target.value } : ("plain" as const)
      })
    )

  const load = (target: string): Effect.Effect<LoadedFile | undefined, PlatformError.PlatformError> =>
    fs.lstat(target).pipe(
      Effect.flatMap((info) => {
        const type = kindOf(info.type)
        if (type === "SymbolicLink") return Effect.fail(moved(target))
        const bytes = type === "File" ? fs.readFile(target) : Effect.succeed(new Uint8Array(0))
        return Effect.map(
          bytes,
          (b): LoadedFile => ({ bytes: b, view: { fingerprint: fingerprint(b), mtimeMs: mtimeOf(info) }, type })
        )
      }),
      Effect.catchIf(
        (e) => e.reason._tag === "NotFound",
        () => Effect.succeed(undefined)
      )
    )

  const steps: CommitSteps = {
    makeParent: (target) => Effect.as(fs.makeDirectory(NodePath.posix.dirname(target), { recursive: true }), undefined),
    stage: (target, bytes) =>
      Effect.gen(function* () {
        const existing = yield* Effect.option(fs.stat(target))
        const temp = tempBeside(target)
        yield* Effect.gen(function* () {
          yield* fs.writeFile(temp, bytes, { flag: "wx" })
          // Permission bits only: a rewrite never keeps set-user-ID, set-group-ID or sticky bits.
          if (Option.isSome(existing)) yield* fs.chmod(temp, existing.value.mode & 0o777)
        }).pipe(Effect.onError(() => fs.remove(temp, { force: true }).pipe(Effect.ignore)))
        return temp
      }),
    place: (temp, target) =>
      fs.rename(temp, target).pipe(Effect.tapError(() => fs.remove(temp, { force: true }).pipe(Effect.ignore))),
    remove: (target) => fs.remove(target, { force: true }),
    drop: (temp) => fs.remove(temp, { force: true }).pipe(Effect.ignore),
    journal: () => Effect.succeed(undefined),
    endJournal: () => Effect.void
  }

  return {
    landing,
    staging: () => Effect.succeed(undefined),
    lockFiles: (_targets, _staging, effect) => effect,
    load,
    makeParent: steps.makeParent,
    write: (target, bytes) => Effect.flatMap(steps.stage(target, bytes), (temp) => steps.place(temp, target)),
    commit: (changes) => commitWith(steps, changes),
    mtimeOf: (target) =>
      fs.stat(target).pipe(
        Effect.map(mtimeOf),
        Effect.orElseSucceed(() => undefined)
      )
  }
}
