/**
 * Loads a file to be changed, on node:fs: opened without following a last link, and checked to
 * be the file meant (the native layer of WriteFs, write-native.ts).
 */
import * as NFS from "node:fs"
import type { Effect, PlatformError } from "effect"
import { fingerprint } from "../read-state/fingerprint.ts"
import type { FileView } from "../read-state/read-state.ts"
import { descriptorPath, io, MovedError } from "./atomic-write.ts"
import type { FileKind, LoadedFile } from "./write-fs-shape.ts"

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
      const identity = { dev: st.dev, ino: st.ino, mode: st.mode }
      return { bytes: new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.length), view, type, identity }
    } finally {
      NFS.closeSync(fd)
    }
  })
