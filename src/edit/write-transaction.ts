/**
 * The one way write, edit and apply_patch change files (WriteFs.transaction): check every path,
 * lock, then hand the body a transaction whose loads, writes and commits record themselves in
 * ReadState. The stale check (a load's `seen` against its file), the write and the record run
 * under ReadState.withPathLock of every target, so a store shared by replicas can serialize
 * them as one step; the layer's own locks (lock files, natively) are taken inside it.
 */
import { Effect, PlatformError } from "effect"
import { displayPath } from "../path/path.ts"
import { withEach } from "../process-wide/lock-table.ts"
import { fingerprint } from "../read-state/fingerprint.ts"
import { ReadState, type ReadStateShape } from "../read-state/read-state.ts"
import type { CheckedEntry } from "../tool/tool.ts"
import type { MadeFolders } from "./make-folders.ts"
import type { Change } from "./patch-commit.ts"
import { type WriteAccess, writeAccess } from "./write-access.ts"
import type {
  Expected,
  FileChange,
  Found,
  LoadedFile,
  WriteFsShape,
  WriteRefused,
  WriteRequest,
  WriteSteps,
  WriteTransaction
} from "./write-fs-shape.ts"

/** The WriteFs of a layer's steps. */
export const makeWriteFs = (steps: WriteSteps): WriteFsShape => {
  const transaction = <A, E, R>(
    request: WriteRequest,
    body: (tx: WriteTransaction) => Effect.Effect<A, E, R>
  ): Effect.Effect<A, E | WriteRefused | PlatformError.PlatformError, R | ReadState> =>
    Effect.gen(function* () {
      const readState = yield* ReadState
      const access = new Map<string, WriteAccess>()
      for (const abs of request.paths) {
        if (!access.has(abs)) {
          const checked = request.checked?.find((p) => p.abs === abs)
          access.set(abs, yield* writeAccess(steps, request.root, abs, displayPath(request.root, abs), checked))
        }
      }
      const first = access.values().next().value
      const staging = first?.staging
      const targets = [...new Set([...access.values()].map((a) => a.target))]
      const tx = open(steps, readState, request, access, staging)
      const locked = steps.lockFiles(targets, staging, body(tx))
      return yield* withEach(targets, readState.withPathLock, locked)
    })
  return { landing: steps.landing, transaction }
}

const open = (
  steps: WriteSteps,
  readState: ReadStateShape,
  request: WriteRequest,
  access: ReadonlyMap<string, WriteAccess>,
  staging: string | undefined
): WriteTransaction => {
  const { sessionId, by } = request
  /** Targets found missing by a load: a write makes their folder first. */
  const missing = new Set<string>()
  /** The folders this transaction made (make-folders.ts): a second file goes in them. */
  const made: MadeFolders = new Map()
  /** The file each loaded target held (null: none): what its write must replace. */
  const loaded = new Map<string, Expected>()
  const accessOf = (abs: string): WriteAccess => {
    const a = access.get(abs)
    if (a === undefined) throw new Error(`${abs} is not a path of this write (WriteRequest.paths)`)
    return a
  }
  const target = (abs: string): string => accessOf(abs).target
  /** What a write to `abs` must replace: the file loaded, else the file the permission check saw. */
  const expected = (abs: string): Expected => {
    const at = target(abs)
    return loaded.has(at) ? loaded.get(at) : accessOf(abs).entry
  }
  const record = (abs: string, at: string, bytes: Uint8Array, known: boolean) =>
    Effect.flatMap(steps.mtimeOf(at), (mtimeMs) =>
      readState.recordWrite(sessionId, abs, { fingerprint: fingerprint(bytes), mtimeMs }, by, known)
    )
  return {
    target,
    load: (abs) =>
      Effect.gen(function* () {
        const at = target(abs)
        const file = yield* steps.load(at)
        const problem = notChecked(accessOf(abs).entry, file)
        if (problem !== undefined) return yield* Effect.fail(replacedError(at, problem))
        loaded.set(at, file === undefined ? null : file.identity)
        if (file === undefined) missing.add(at)
        else missing.delete(at)
        const found: Found = { file, seen: yield* readState.lastSeen(sessionId, abs) }
        return found
      }),
    write: (abs, bytes, known) =>
      Effect.gen(function* () {
        const at = target(abs)
        const checked = accessOf(abs)
        const madeIn = missing.has(at) ? yield* steps.makeParent(at, checked, made) : undefined
        yield* steps.write(at, bytes, staging, expected(abs), madeIn ?? checked.folder)
        missing.delete(at)
        yield* record(abs, at, bytes, known)
      }),
    commit: (changes: ReadonlyArray<FileChange>) =>
      Effect.gen(function* () {
        const planned: Array<Change> = changes.map((c) => ({
          target: target(c.abs),
          bytes: c.bytes,
          before: c.before,
          expect: expected(c.abs),
          folder: accessOf(c.abs).folder,
          base: accessOf(c.abs).base
        }))
        yield* steps.commit(planned, staging)
        for (const c of changes) {
          if (c.bytes === undefined) yield* readState.forget(sessionId, c.abs)
          else yield* record(c.abs, target(c.abs), c.bytes, c.known ?? true)
        }
      })
  }
}

/**
 * Why the file a load found is not the one the permission check saw (`entry`), or undefined: a
 * file where there was none, another file (device and inode: a hard link or a copy put in its
 * place), or an execute bit it did not have. Only where both sides are known (natively).
 */
const notChecked = (entry: CheckedEntry | null | undefined, file: LoadedFile | undefined): string | undefined => {
  if (entry === undefined || file === undefined) return undefined
  if (entry === null) return "a file was created there"
  const now = file.identity
  if (now === undefined) return undefined
  if (now.dev !== entry.dev || now.ino !== entry.ino) return "it was replaced by another file (a link to another one?)"
  if ((now.mode & 0o111) !== 0 && (entry.mode & 0o111) === 0) return "it was made executable"
  return undefined
}

const replacedError = (at: string, problem: string): PlatformError.PlatformError =>
  PlatformError.systemError({
    _tag: "BadResource",
    module: "FileSystem",
    method: "open",
    pathOrDescriptor: at,
    description: `not the file the permission check saw: ${problem} since; nothing was read or changed. Call again: it is checked afresh`
  })
