/**
 * The stale check edit, write and apply_patch share: how a file changed since the session last
 * saw it (WriteFs.transaction's load gives both, under the file's lock).
 */
import { changedLines } from "../read-state/fingerprint.ts"
import type { FileSnapshot, FileView } from "../read-state/read-state.ts"

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
