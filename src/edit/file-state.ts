/**
 * The file steps edit, write and apply_patch share: say how a file changed since the session
 * last saw it, and save it atomically (WriteFs) while recording what was written.
 */
import { Effect, type PlatformError } from "effect"
import { changedLines, fingerprint } from "../read-state/fingerprint.ts"
import { type FileSnapshot, type FileView, ReadState, type RecordedBy } from "../read-state/read-state.ts"
import type { WriteFsShape } from "./write-fs.ts"

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
  writes: WriteFsShape,
  sessionId: string,
  abs: string,
  target: string,
  bytes: Uint8Array,
  by: Exclude<RecordedBy, "read">,
  known: boolean
): Effect.Effect<void, never, ReadState> =>
  Effect.gen(function* () {
    const readState = yield* ReadState
    const mtimeMs = yield* writes.mtimeOf(target)
    yield* readState.recordWrite(sessionId, abs, { fingerprint: fingerprint(bytes), mtimeMs }, by, known)
  })

/**
 * Writes `target` (the real path of `abs`) atomically through `staging` and records the new
 * content as what the session knows `abs` holds; `known`: the model has seen all of it.
 */
export const saveFile = (
  writes: WriteFsShape,
  sessionId: string,
  abs: string,
  target: string,
  bytes: Uint8Array,
  by: Exclude<RecordedBy, "read">,
  known: boolean,
  staging: string | undefined
): Effect.Effect<void, PlatformError.PlatformError, ReadState> =>
  Effect.gen(function* () {
    yield* writes.write(target, bytes, staging)
    yield* recordSaved(writes, sessionId, abs, target, bytes, by, known)
  })
