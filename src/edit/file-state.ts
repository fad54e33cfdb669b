/**
 * The file steps edit, write and apply_patch share: load a file with what identifies its
 * content, say how it changed since the session last saw it, and save it atomically while
 * recording what was written.
 */
import { Effect, FileSystem, Option, type PlatformError } from "effect"
import { changedLines, fingerprint } from "../read-state/fingerprint.ts"
import { type FileSnapshot, type FileView, ReadState, type RecordedBy } from "../read-state/read-state.ts"
import { writeFileAtomic } from "./atomic-write.ts"

export interface LoadedFile {
  readonly bytes: Uint8Array
  readonly view: FileView
}

const mtimeOf = (info: FileSystem.File.Info): number | undefined =>
  Option.match(info.mtime, { onNone: () => undefined, onSome: (d) => d.getTime() })

/** The file's bytes and view; None when it does not exist. Fails on a directory or other kind. */
export const loadFile = (
  abs: string
): Effect.Effect<
  Option.Option<LoadedFile & { readonly info: FileSystem.File.Info }>,
  PlatformError.PlatformError,
  FileSystem.FileSystem
> =>
  Effect.gen(function* () {
    const fs = yield* FileSystem.FileSystem
    const info = yield* fs.stat(abs).pipe(
      Effect.map(Option.some),
      Effect.catchTag("PlatformError", (e) =>
        e.reason._tag === "NotFound" ? Effect.succeed(Option.none()) : Effect.fail(e)
      )
    )
    if (Option.isNone(info)) return Option.none()
    if (info.value.type !== "File")
      return Option.some({
        bytes: new Uint8Array(0),
        info: info.value,
        view: { fingerprint: fingerprint(new Uint8Array(0)), mtimeMs: mtimeOf(info.value) }
      })
    const bytes = yield* fs.readFile(abs)
    return Option.some({
      bytes,
      info: info.value,
      view: { fingerprint: fingerprint(bytes), mtimeMs: mtimeOf(info.value) }
    })
  })

/** How the file changed since `seen`, in words; undefined when its content is the same. */
export const describeChange = (seen: FileSnapshot, now: FileView): string | undefined => {
  if (seen.fingerprint.hash === now.fingerprint.hash) return undefined
  const lines = changedLines(seen.fingerprint, now.fingerprint)
  const size =
    seen.fingerprint.size === now.fingerprint.size
      ? "same size"
      : `${seen.fingerprint.size} → ${now.fingerprint.size} bytes`
  const verb = seen.by === "read" ? "read it" : `last changed it with ${seen.by}`
  return `changed since you ${verb} (${lines === undefined ? size : `${lines}, ${size}`})`
}

/**
 * Whether the model knows all of a file after changing part of it: it knew the content before
 * (`seen.known`) and nobody changed the file since (`change` undefined).
 */
export const stillKnown = (seen: FileSnapshot | undefined, change: string | undefined): boolean =>
  seen?.known === true && change === undefined

/**
 * Writes atomically and records the new content as what the session knows the file holds;
 * `known`: the model has seen all of it (see FileSnapshot.known).
 */
export const saveFile = (
  sessionId: string,
  abs: string,
  bytes: Uint8Array,
  by: Exclude<RecordedBy, "read">,
  known: boolean
): Effect.Effect<void, PlatformError.PlatformError, FileSystem.FileSystem | ReadState> =>
  Effect.gen(function* () {
    const fs = yield* FileSystem.FileSystem
    const readState = yield* ReadState
    yield* writeFileAtomic(abs, bytes)
    const info = yield* fs.stat(abs)
    yield* readState.recordWrite(sessionId, abs, { fingerprint: fingerprint(bytes), mtimeMs: mtimeOf(info) }, by, known)
  })
