/**
 * The file steps edit, write and apply_patch share: load a file with what identifies its
 * content (opened without following a last link, and checked to be the file meant), say how
 * it changed since the session last saw it, and save it atomically while recording what was
 * written.
 */
import * as NFS from "node:fs"
import { Effect, type FileSystem, type PlatformError } from "effect"
import { changedLines, fingerprint } from "../read-state/fingerprint.ts"
import { type FileSnapshot, type FileView, ReadState, type RecordedBy } from "../read-state/read-state.ts"
import { commitFile, descriptorPath, io, MovedError, stageFile } from "./atomic-write.ts"

export type FileKind = "File" | "Directory" | "SymbolicLink" | "Other"

export interface LoadedFile {
  readonly bytes: Uint8Array
  readonly view: FileView
  readonly type: FileKind
}

const kindOf = (st: NFS.Stats): FileKind =>
  st.isFile() ? "File" : st.isDirectory() ? "Directory" : st.isSymbolicLink() ? "SymbolicLink" : "Other"

/**
 * The bytes and view of `target` — a real path (writeTarget), so its last component is no link
 * and is opened with O_NOFOLLOW — or undefined when it does not exist. The opened descriptor's
 * own path must be `target`: a folder swapped for a link since the path was resolved is caught
 * here (MovedError), not read through.
 */
export const loadFile = (target: string): Effect.Effect<LoadedFile | undefined, PlatformError.PlatformError> =>
  io("open", target, () => {
    let fd: number
    try {
      fd = NFS.openSync(
        target,
        NFS.constants.O_RDONLY | NFS.constants.O_NOFOLLOW | NFS.constants.O_NONBLOCK | NFS.constants.O_NOCTTY
      )
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code
      if (code === "ENOENT") return undefined
      if (code === "ELOOP") {
        throw new MovedError(`${target} became a symbolic link while it was being changed; nothing was changed`)
      }
      throw e
    }
    try {
      const real = descriptorPath(fd)
      if (real !== undefined && real !== target) {
        throw new MovedError(`${target} now leads to ${real} (a folder on its path was swapped); nothing was changed`)
      }
      const st = NFS.fstatSync(fd)
      const type = kindOf(st)
      const bytes = type === "File" ? NFS.readFileSync(fd) : new Uint8Array(0)
      const view: FileView = { fingerprint: fingerprint(bytes), mtimeMs: st.mtimeMs }
      return { bytes: new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.length), view, type }
    } finally {
      NFS.closeSync(fd)
    }
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

/** Records `bytes` as what the session knows `abs` holds now (after a write or a patch). */
export const recordSaved = (
  sessionId: string,
  abs: string,
  target: string,
  bytes: Uint8Array,
  by: Exclude<RecordedBy, "read">,
  known: boolean
): Effect.Effect<void, never, ReadState> =>
  Effect.gen(function* () {
    const readState = yield* ReadState
    const mtimeMs = NFS.statSync(target, { throwIfNoEntry: false })?.mtimeMs
    yield* readState.recordWrite(sessionId, abs, { fingerprint: fingerprint(bytes), mtimeMs }, by, known)
  })

/**
 * Writes `target` (the real path of `abs`) atomically through `staging` and records the new
 * content as what the session knows `abs` holds; `known`: the model has seen all of it.
 */
export const saveFile = (
  sessionId: string,
  abs: string,
  target: string,
  bytes: Uint8Array,
  by: Exclude<RecordedBy, "read">,
  known: boolean,
  staging: string | undefined
): Effect.Effect<void, PlatformError.PlatformError, FileSystem.FileSystem | ReadState> =>
  Effect.gen(function* () {
    const temp = yield* stageFile(target, bytes, staging)
    yield* commitFile(temp, target, staging)
    yield* recordSaved(sessionId, abs, target, bytes, by, known)
  })
