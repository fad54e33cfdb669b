/**
 * Commits a multi-file change all or nothing, across a crash too: every new content is staged
 * (written and synced to a temp file) first; then a journal listing every rename and removal
 * is written and synced — the commit point; then they are done, and the journal removed. A
 * kill before the journal leaves only temps, which the next start removes (nothing changed); a
 * kill after it leaves the journal, which the next start (or the next process to find the
 * owner dead on a lock) finishes (everything changed). A failure that is not a crash (a
 * permission error half-way) puts back the files already changed before returning it.
 *
 * The order is one algorithm (`commitWith`); the steps are the layer's: node:fs with a journal
 * here, effect's FileSystem without one in write-platform.ts.
 */
import * as NFS from "node:fs"
import { Effect, FileSystem, type PlatformError } from "effect"
import type { CheckedBase, CheckedEntry } from "../tool/tool.ts"
import { commitFile, type Expected, io, removeFile, stageFile } from "./atomic-write.ts"
import { type MadeFolders, type MakeParent, nativeMakeParent } from "./make-folders.ts"
import { type JournalEntry, writeJournal } from "./staging.ts"

export interface Change {
  /** A real path (writeTarget). */
  readonly target: string
  /** The new content, or undefined to remove the file. */
  readonly bytes: Uint8Array | undefined
  /** The content before, or undefined when the file did not exist. */
  readonly before: Uint8Array | undefined
  /** The file the change replaces (write-fs-shape.ts's Expected). */
  readonly expect?: Expected
  /** The folder it is in when the check looked (CheckedPath.folder): the change is made there or not at all. */
  readonly folder?: CheckedEntry | null | undefined
  /** When that folder was missing: the deepest one there (CheckedPath.base), which the folders are made from. */
  readonly base?: CheckedBase | undefined
}

/** The steps a commit is made of. */
export interface CommitSteps {
  /** Makes the folder `target` goes in (WriteSteps.makeParent): the folder the change must then be made in. */
  readonly makeParent: MakeParent
  /** Writes `bytes` to a fresh temp for `target` (which must be `expect`, natively); the temp's path. */
  readonly stage: (
    target: string,
    bytes: Uint8Array,
    expect?: Expected
  ) => Effect.Effect<string, PlatformError.PlatformError>
  /** Renames a staged temp onto `target` (removing the temp when it fails), in the folder `folder` when given. */
  readonly place: (
    temp: string,
    target: string,
    folder?: CheckedEntry | null
  ) => Effect.Effect<void, PlatformError.PlatformError>
  readonly remove: (target: string, folder?: CheckedEntry | null) => Effect.Effect<void, PlatformError.PlatformError>
  /** Removes a temp that may not have been placed. */
  readonly drop: (temp: string) => Effect.Effect<void>
  /** Records the entries before the first is done (the commit point): what to remove after, or undefined. */
  readonly journal: (
    entries: ReadonlyArray<JournalEntry>
  ) => Effect.Effect<string | undefined, PlatformError.PlatformError>
  readonly endJournal: (journal: string) => Effect.Effect<void>
}

export const commitWith = (
  steps: CommitSteps,
  changes: ReadonlyArray<Change>
): Effect.Effect<void, PlatformError.PlatformError> =>
  Effect.gen(function* () {
    const puts = changes.filter((c) => c.bytes !== undefined)
    const removals = changes.filter((c) => c.bytes === undefined)
    const temps: Array<string> = []
    // The folder each put is made in: the one checked, or the one made for it.
    const folders = new Map<Change, CheckedEntry | null | undefined>()
    const made: MadeFolders = new Map()
    // Suspended: the temps are those staged by the time it runs.
    const dropTemps = Effect.suspend(() => Effect.forEach(temps, steps.drop, { discard: true }))
    // Stage: nothing in place changes yet.
    yield* Effect.gen(function* () {
      for (const c of puts) {
        folders.set(c, (yield* steps.makeParent(c.target, c, made)) ?? c.folder)
        temps.push(yield* steps.stage(c.target, c.bytes!, c.expect))
      }
    }).pipe(Effect.onError(() => dropTemps))
    const entries: Array<JournalEntry> = [
      ...puts.map((c, i): JournalEntry => ({ op: "put", temp: temps[i]!, target: c.target })),
      ...removals.map((c): JournalEntry => ({ op: "remove", target: c.target }))
    ]
    // The commit point.
    const journal = yield* steps.journal(entries).pipe(Effect.onError(() => dropTemps))
    const restore = (change: Change) =>
      change.before === undefined
        ? steps.remove(change.target)
        : Effect.flatMap(steps.stage(change.target, change.before), (t) => steps.place(t, change.target))
    const done: Array<Change> = []
    const apply = Effect.gen(function* () {
      for (const [i, e] of entries.entries()) {
        const change = i < puts.length ? puts[i]! : removals[i - puts.length]!
        if (e.op === "put") yield* steps.place(e.temp, e.target, folders.get(change))
        else yield* steps.remove(e.target, change.folder)
        done.push(change)
      }
    })
    yield* apply.pipe(
      Effect.onError(() =>
        Effect.gen(function* () {
          // Best effort: the original error is what is reported.
          for (const c of done.reverse()) yield* Effect.ignore(restore(c))
          yield* dropTemps
        })
      ),
      Effect.ensuring(journal === undefined ? Effect.void : steps.endJournal(journal))
    )
  })

/** The steps on node:fs: temps synced in `staging`, a synced journal there (none without a staging folder). */
export const nativeCommitSteps = (fs: FileSystem.FileSystem, staging: string | undefined): CommitSteps => ({
  makeParent: nativeMakeParent,
  stage: (target, bytes, expect) => stageFile(target, bytes, staging, expect),
  place: (temp, target, folder) =>
    commitFile(temp, target, staging, folder).pipe(Effect.provideService(FileSystem.FileSystem, fs)),
  remove: (target, folder) => removeFile(target, folder),
  drop: (temp) => Effect.sync(() => NFS.rmSync(temp, { force: true })),
  // Without a staging folder there is no journal: each file is still atomic.
  journal: (entries) =>
    staging === undefined ? Effect.succeed(undefined) : io("write", staging, () => writeJournal(staging, entries)),
  endJournal: (journal) => Effect.sync(() => NFS.rmSync(journal, { force: true }))
})
