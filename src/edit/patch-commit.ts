/**
 * Commits a multi-file change all or nothing, across a crash too: every new content is staged
 * (written and synced to a temp file) first; then a journal listing every rename and removal
 * is written and synced — the commit point; then they are done, and the journal removed. A
 * kill before the journal leaves only temps, which the next start removes (nothing changed); a
 * kill after it leaves the journal, which the next start (or the next process to find the
 * owner dead on a lock) finishes (everything changed). A failure that is not a crash (a
 * permission error half-way) puts back the files already changed before returning it.
 */
import * as NFS from "node:fs"
import * as NodePath from "node:path"
import { Effect, type FileSystem, type PlatformError } from "effect"
import { commitFile, io, stageFile } from "./atomic-write.ts"
import { type JournalEntry, writeJournal } from "./staging.ts"

export interface Change {
  /** A real path (writeTarget). */
  readonly target: string
  /** The new content, or undefined to remove the file. */
  readonly bytes: Uint8Array | undefined
  /** The content before, or undefined when the file did not exist. */
  readonly before: Uint8Array | undefined
}

/** Puts `change.target` back as it was before (best effort: the original error is what is reported). */
const restore = (change: Change, staging: string | undefined) =>
  change.before === undefined
    ? io("remove", change.target, () => NFS.rmSync(change.target, { force: true }))
    : Effect.flatMap(stageFile(change.target, change.before, staging), (t) => commitFile(t, change.target, staging))

export const commitChanges = (
  changes: ReadonlyArray<Change>,
  staging: string | undefined
): Effect.Effect<void, PlatformError.PlatformError, FileSystem.FileSystem> =>
  Effect.gen(function* () {
    const puts = changes.filter((c) => c.bytes !== undefined)
    const temps: Array<string> = []
    const dropTemps = Effect.sync(() => {
      for (const t of temps) NFS.rmSync(t, { force: true })
    })
    // Stage: nothing in place changes yet.
    yield* Effect.gen(function* () {
      for (const c of puts) {
        yield* io("mkdir", c.target, () => NFS.mkdirSync(NodePath.dirname(c.target), { recursive: true }))
        temps.push(yield* stageFile(c.target, c.bytes!, staging))
      }
    }).pipe(Effect.onError(() => dropTemps))
    const entries: Array<JournalEntry> = [
      ...puts.map((c, i): JournalEntry => ({ op: "put", temp: temps[i]!, target: c.target })),
      ...changes.filter((c) => c.bytes === undefined).map((c): JournalEntry => ({ op: "remove", target: c.target }))
    ]
    // The commit point. Without a staging folder there is no journal: each file is still atomic.
    const journal =
      staging === undefined
        ? undefined
        : yield* io("write", staging, () => writeJournal(staging, entries)).pipe(Effect.onError(() => dropTemps))
    const done: Array<Change> = []
    const apply = Effect.gen(function* () {
      for (const [i, e] of entries.entries()) {
        const change = i < puts.length ? puts[i]! : changes.filter((c) => c.bytes === undefined)[i - puts.length]!
        if (e.op === "put") yield* commitFile(e.temp, e.target, staging)
        else yield* io("remove", e.target, () => NFS.rmSync(e.target, { force: true }))
        done.push(change)
      }
    })
    yield* apply.pipe(
      Effect.onError(() =>
        Effect.gen(function* () {
          for (const c of done.reverse()) yield* Effect.ignore(restore(c, staging))
          yield* dropTemps
        })
      ),
      Effect.ensuring(
        Effect.sync(() => {
          if (journal !== undefined) NFS.rmSync(journal, { force: true })
        })
      )
    )
  })
