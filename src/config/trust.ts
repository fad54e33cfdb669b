/**
 * Which project folders the person trusts to start their own programs (`.mcp.json` servers,
 * hooks, language servers named in freecode.json). One small file per trusted folder under the
 * state folder's `trusted/`, named by a hash of the folder's real path and holding that path:
 * two processes trusting or forgetting at once never overwrite each other's entries.
 *
 * The records are the person's state on this machine, not the project's files: they are read and
 * written through effect's FileSystem, Node's own, even when the tools work over another file
 * system (an in-memory project still asks the host whether the person trusts its root).
 */
import { createHash } from "node:crypto"
import { join, resolve } from "node:path"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import { Effect, FileSystem, type PlatformError } from "effect"
import { stateDirConfig } from "../session/location.ts"
import { readableError } from "../tool/readable-error.ts"
import { ConfigError } from "./error.ts"

/** The folder as trust knows it: absolute, links resolved (a link to a folder is that folder). */
const trustKey = (fs: FileSystem.FileSystem, dir: string): Effect.Effect<string> => {
  const absolute = resolve(dir)
  return fs.realPath(absolute).pipe(Effect.orElseSucceed(() => absolute))
}

const entryFile = (stateDir: string, key: string) =>
  join(stateDir, "trusted", createHash("sha256").update(key).digest("hex").slice(0, 32))

const stateDir = stateDirConfig.pipe(
  Effect.mapError((e) => new ConfigError({ message: `the state folder is not usable: ${e.message}` }))
)

/** Runs `f` with the host's FileSystem: the records live there whatever the project's is. */
const onHost = <A, E>(f: (fs: FileSystem.FileSystem) => Effect.Effect<A, E>): Effect.Effect<A, E> =>
  Effect.flatMap(FileSystem.FileSystem, f).pipe(Effect.provide(NodeFileSystem.layer))

/** Whether `dir` was trusted with `freecode-tools trust`. An unreadable record counts as not trusted. */
export const isTrusted = (dir: string): Effect.Effect<boolean> =>
  onHost((fs) =>
    Effect.gen(function* () {
      const key = yield* trustKey(fs, dir)
      const text = yield* fs.readFileString(entryFile(yield* stateDir, key))
      return text.trim() === key
    }).pipe(Effect.orElseSucceed(() => false))
  )

/** What is at `path` without following a link; undefined when nothing is. */
const kindAt = (fs: FileSystem.FileSystem, path: string) =>
  fs.lstat(path).pipe(
    Effect.map((info) => info.type),
    Effect.catchIf(
      (e: PlatformError.PlatformError) => e.reason._tag === "NotFound",
      () => Effect.succeed(undefined)
    )
  )

/** Moves what is at `path` aside when it is there and not a folder; returns where to. */
const moveAsideUnlessFolder = (fs: FileSystem.FileSystem, path: string) =>
  Effect.gen(function* () {
    const kind = yield* kindAt(fs, path)
    if (kind === undefined || kind === "Directory") return undefined
    const aside = `${path}.damaged-${new Date().toISOString().replace(/[:.]/g, "-")}`
    yield* fs.rename(path, aside)
    return aside
  })

/** Records `dir` as trusted; returns the folder as recorded. */
export const trust = (dir: string): Effect.Effect<string, ConfigError> =>
  onHost((fs) =>
    Effect.gen(function* () {
      const key = yield* trustKey(fs, dir)
      const file = entryFile(yield* stateDir, key)
      const tmp = `${file}.${process.pid}.tmp`
      const folder = join(file, "..")
      const aside = yield* Effect.gen(function* () {
        const moved = yield* moveAsideUnlessFolder(fs, folder)
        yield* fs.makeDirectory(folder, { recursive: true, mode: 0o700 })
        // A damaged record (a folder in its place) is replaced, not refused: trusting is the fix.
        if ((yield* kindAt(fs, file)) === "Directory") yield* fs.remove(file, { recursive: true })
        yield* fs.writeFileString(tmp, `${key}\n`, { mode: 0o600 })
        yield* fs.rename(tmp, file)
        return moved
      }).pipe(
        Effect.mapError(
          (e) => new ConfigError({ message: `cannot record ${key} as trusted in ${file}: ${readableError(e)}` })
        )
      )
      if (aside !== undefined) {
        yield* Effect.logWarning(
          `the trust records' folder ${folder} was not a folder; it was moved aside to ${aside} and a fresh one made`
        )
      }
      return key
    })
  )

/** Forgets that `dir` was trusted; returns the folder and whether it had been. */
export const forget = (dir: string): Effect.Effect<{ readonly dir: string; readonly was: boolean }, ConfigError> =>
  onHost((fs) =>
    Effect.gen(function* () {
      const key = yield* trustKey(fs, dir)
      const file = entryFile(yield* stateDir, key)
      const was = yield* fs.remove(file).pipe(
        Effect.as(true),
        Effect.catchIf(
          (e) => e.reason._tag === "NotFound",
          () => Effect.succeed(false)
        ),
        Effect.mapError((e) => new ConfigError({ message: `cannot forget ${key}: ${readableError(e)}` }))
      )
      return { dir: key, was }
    })
  )
