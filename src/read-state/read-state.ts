/**
 * What each session has been shown of each file, and what it last knew each file to hold.
 *
 * - `read` records every window it shows, by call id. An identical re-read (same path, same
 *   window, same mtime, size and content hash, and the earlier copy still in the conversation)
 *   is answered with a pointer instead of the content. FREECODE_READ_DEDUP=0 turns that off.
 * - `edit`, `write` and `apply_patch` record the content they wrote with no window: it is what
 *   the file holds, not what the model was shown, so it never answers a dedup — and it drops
 *   the read records of that file, whose copies show the old text.
 * - `markReadPruned` is called when a read result is cut from the conversation: dedup must not
 *   point at a copy that is no longer there.
 * - `lastSeen` is the stale-file check: edit warns and write refuses when a file's hash is no
 *   longer the one recorded, and write also refuses when the model has not seen all of the
 *   content (`known`: it edited a file it never read).
 * - `withPathLock` holds a path's write lock: a write's stale check, the write and its record
 *   run under it (src/edit/write-transaction.ts), so they are one step to any other writer.
 *
 * Memory is bounded: 2,000 files per session, for the sessions alive in `Sessions`, which drops
 * a session's records when it ends.
 */
import { Config, Context, Effect, Layer } from "effect"
import { makeLockTable } from "../process-wide/lock-table.ts"
import { processWide } from "../process-wide/process-wide.ts"
import { type SessionsShape, sessionsOrOwn } from "../session/sessions.ts"
import type { Fingerprint } from "./fingerprint.ts"

export interface ReadWindow {
  readonly offset: number
  readonly limit: number
}

/** What a tool saw of a file: its fingerprint and modification time. */
export interface FileView {
  readonly fingerprint: Fingerprint
  readonly mtimeMs: number | undefined
}

export type RecordedBy = "read" | "edit" | "write" | "apply_patch"

export interface FileSnapshot extends FileView {
  readonly by: RecordedBy
  /**
   * The model has seen all of this content: it read the file, or wrote all of it, or changed
   * part of a file whose content it knew. An edit of a file never read leaves it false.
   */
  readonly known: boolean
}

interface ReadRecord {
  readonly callId: string
  readonly window: ReadWindow
  readonly view: FileView
  inContext: boolean
}

interface FileRecord {
  snapshot: FileSnapshot
  reads: Array<ReadRecord>
}

interface Session {
  readonly files: Map<string, FileRecord>
  /** call id → path, for markReadPruned. */
  readonly calls: Map<string, string>
}

export interface ReadStateShape {
  /** Whether identical re-reads are answered with a pointer (FREECODE_READ_DEDUP). */
  readonly dedup: boolean
  /** The call id of an earlier read that showed exactly this, when its copy is still in context. */
  readonly findDuplicate: (
    sessionId: string,
    path: string,
    window: ReadWindow,
    view: FileView
  ) => Effect.Effect<string | undefined>
  readonly recordRead: (
    sessionId: string,
    callId: string,
    path: string,
    window: ReadWindow,
    view: FileView
  ) => Effect.Effect<void>
  /** Records content a tool wrote (or found and left): no window, never a dedup answer. */
  readonly recordWrite: (
    sessionId: string,
    path: string,
    view: FileView,
    by: Exclude<RecordedBy, "read">,
    known: boolean
  ) => Effect.Effect<void>
  /** Forgets a file (it was deleted or moved away). */
  readonly forget: (sessionId: string, path: string) => Effect.Effect<void>
  /** What the session last knew the file to hold, and which tool recorded it. */
  readonly lastSeen: (sessionId: string, path: string) => Effect.Effect<FileSnapshot | undefined>
  /** The read result of `callId` was pruned from the conversation. */
  readonly markReadPruned: (sessionId: string, callId: string) => Effect.Effect<void>
  /**
   * Runs `effect` holding the write lock for `path` in this workspace: the stale check and the
   * record of a write happen under it, so no other write of the file comes between them. A
   * shared store takes a lock every replica sees.
   */
  readonly withPathLock: <A, E, R>(path: string, effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
}

/**
 * The in-process write locks, one per path for the whole process (src/process-wide): paths are
 * the machine's, so two systems in one process writing one file queue on one lock.
 */
export const pathLocks = processWide("path locks", makeLockTable)

const MAX_FILES = 2000

/** How an identical re-read's answer begins; `dedupPointer` names the earlier call. */
export const DEDUP_POINTER =
  "<unchanged> This file is byte-for-byte identical to what an earlier read of the same lines returned in this conversation"

/** The answer to an identical re-read: the earlier call's id, so the model can find that result. */
export const dedupPointer = (earlierCallId: string): string =>
  `${DEDUP_POINTER} (call ${earlierCallId}): use that result rather than reading again.`

const sameView = (a: FileView, b: FileView) =>
  a.mtimeMs === b.mtimeMs && a.fingerprint.size === b.fingerprint.size && a.fingerprint.hash === b.fingerprint.hash

export const makeReadState = (options: { readonly dedup: boolean }, owner: SessionsShape): ReadStateShape => {
  const sessions = owner.slot<Session>("readState")
  const session = (id: string): Session => sessions.getOrCreate(id, () => ({ files: new Map(), calls: new Map() }))
  const touch = (s: Session, path: string, record: FileRecord) => {
    s.files.delete(path)
    s.files.set(path, record)
    if (s.files.size > MAX_FILES) {
      const [oldest, dropped] = s.files.entries().next().value!
      s.files.delete(oldest)
      for (const r of dropped.reads) s.calls.delete(r.callId)
    }
  }
  const dropReads = (s: Session, record: FileRecord) => {
    for (const r of record.reads) s.calls.delete(r.callId)
    record.reads = []
  }
  return {
    dedup: options.dedup,
    findDuplicate: (sessionId, path, window, view) =>
      Effect.sync(() => {
        if (!options.dedup) return undefined
        const record = sessions.get(sessionId)?.files.get(path)
        const hit = record?.reads.find(
          (r) =>
            r.inContext &&
            r.window.offset === window.offset &&
            r.window.limit === window.limit &&
            sameView(r.view, view)
        )
        return hit?.callId
      }),
    recordRead: (sessionId, callId, path, window, view) =>
      Effect.sync(() => {
        const s = session(sessionId)
        const existing = s.files.get(path)
        const record: FileRecord = existing ?? { snapshot: { ...view, by: "read", known: true }, reads: [] }
        // Copies of other content are no longer what the file holds.
        if (existing !== undefined && !sameView(existing.snapshot, view)) dropReads(s, record)
        record.snapshot = { ...view, by: "read", known: true }
        // A read of the same window replaces the earlier one, which is forgotten with its call id
        // (kept, every repeated read would grow the session's call map for as long as it lives).
        record.reads = record.reads.filter((r) => {
          const same = r.window.offset === window.offset && r.window.limit === window.limit
          if (same) s.calls.delete(r.callId)
          return !same
        })
        record.reads.push({ callId, window, view, inContext: true })
        s.calls.set(callId, path)
        touch(s, path, record)
      }),
    recordWrite: (sessionId, path, view, by, known) =>
      Effect.sync(() => {
        const s = session(sessionId)
        const record: FileRecord = s.files.get(path) ?? { snapshot: { ...view, by, known }, reads: [] }
        dropReads(s, record)
        record.snapshot = { ...view, by, known }
        touch(s, path, record)
      }),
    forget: (sessionId, path) =>
      Effect.sync(() => {
        const s = sessions.get(sessionId)
        const record = s?.files.get(path)
        if (s === undefined || record === undefined) return
        dropReads(s, record)
        s.files.delete(path)
      }),
    lastSeen: (sessionId, path) => Effect.sync(() => sessions.get(sessionId)?.files.get(path)?.snapshot),
    withPathLock: (path, effect) => pathLocks.get().withLock(path, effect),
    markReadPruned: (sessionId, callId) =>
      Effect.sync(() => {
        const s = sessions.get(sessionId)
        const path = s?.calls.get(callId)
        if (s === undefined || path === undefined) return
        const read = s.files.get(path)?.reads.find((r) => r.callId === callId)
        if (read !== undefined) read.inContext = false
      })
  }
}

/** FREECODE_READ_DEDUP: "0" turns dedup off; anything else (or nothing) leaves it on. */
export const readDedupConfig = Config.String("FREECODE_READ_DEDUP").pipe(
  Config.withDefault("1"),
  Config.map((v) => v.trim() !== "0")
)

export class ReadState extends Context.Service<ReadState, ReadStateShape>()("freecode/ReadState") {
  /** Reads FREECODE_READ_DEDUP through Effect Config when built. */
  static readonly layer = Layer.effect(
    ReadState,
    Effect.gen(function* () {
      const dedup = yield* readDedupConfig
      return ReadState.of(makeReadState({ dedup }, yield* sessionsOrOwn))
    })
  )
  /** Fixed settings, for tests and embedders. */
  static readonly layerWith = (options: { readonly dedup: boolean }) =>
    Layer.effect(
      ReadState,
      Effect.map(sessionsOrOwn, (owner) => ReadState.of(makeReadState(options, owner)))
    )
}
