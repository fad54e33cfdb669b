/**
 * The platform LocalFs layer: every call through effect's `FileSystem` service, so the built-in
 * tools read whatever file system is provided (an in-memory one in a test or an embedder, a
 * remote one). It keeps nothing between calls: FileSystem's stat has no ctime, so an unchanged
 * file cannot be told from a rewritten one (stat-cache.ts).
 */
import { Effect, type FileSystem, Option } from "effect"
import { childPath } from "../path/path.ts"
import { fillUnknownTypes } from "./entry-types.ts"
import type { DerivedSpec, DirectoryEntry, FileStats, LocalFsShape, OpenFile } from "./local-fs-shape.ts"

const statsOf = (info: FileSystem.File.Info): FileStats => ({
  type: info.type,
  size: Number(info.size),
  mtimeMs: Option.match(info.mtime, { onNone: () => 0, onSome: (d) => d.getTime() })
})

const byName = (a: DirectoryEntry, b: DirectoryEntry) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)

export const makePlatformFs = (fs: FileSystem.FileSystem): LocalFsShape => {
  const readDirectory = (path: string) =>
    fs.readDirectoryEntries(path).pipe(
      Effect.flatMap((entries) =>
        fillUnknownTypes(path, entries, (child) => Effect.map(fs.lstat(child), (i) => i.type))
      ),
      Effect.map((entries): ReadonlyArray<DirectoryEntry> => [...entries].sort(byName))
    )

  /**
   * A stat first: only a regular file is opened, so opening never waits on a FIFO or a device
   * (FileSystem.open has no O_NONBLOCK). The caller reads only when the type is "File".
   */
  const openForReading = (path: string) =>
    Effect.flatMap(fs.stat(path), (info) => {
      const stats = statsOf(info)
      if (stats.type !== "File") {
        return Effect.succeed<OpenFile>({ stats, read: () => Effect.succeed(0) })
      }
      return Effect.map(
        fs.open(path, { flag: "r" }),
        (file): OpenFile => ({
          stats,
          read: (buffer, position) => file.read(buffer, { position: BigInt(position) })
        })
      )
    })

  const readWhole = (path: string, maxBytes: number) =>
    Effect.flatMap(fs.stat(path), (info) => {
      const stats = statsOf(info)
      if (stats.type !== "File" || stats.size >= maxBytes) return Effect.succeed({ stats, bytes: undefined })
      // A file that grew past what stat said is left to the streaming path.
      return Effect.map(fs.readFile(path), (bytes) => ({ stats, bytes: bytes.length > stats.size ? undefined : bytes }))
    })

  const readDerived = <V>(dir: string, name: string, spec: DerivedSpec<V>): Effect.Effect<V | undefined> =>
    fs.readFileString(childPath(dir, name)).pipe(
      Effect.map((text): V | undefined => spec.derive(dir, text)),
      Effect.orElseSucceed(() => undefined)
    )

  return {
    onDisk: false,
    realPath: (path) => fs.realPath(path),
    linkFreeBelow: () => false,
    stat: (path) => Effect.map(fs.stat(path), (info) => ({ type: info.type, owner: Option.getOrUndefined(info.uid) })),
    readLink: (path) => fs.readLink(path).pipe(Effect.orElseSucceed(() => undefined)),
    readDirectory,
    openForReading,
    readWhole,
    readFile: (path) => fs.readFile(path),
    readDerived
  }
}
