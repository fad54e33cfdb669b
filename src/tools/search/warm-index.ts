/**
 * The warm index: the project's file list as the walk sees it (walk.ts: .gitignore, the
 * dependency-folder skip, hidden files, no links followed), kept in memory and fresh, so glob
 * answers without walking. docs/search.md has the design; in short:
 *
 * - Built in the background by one walk of the root the first time a search asks; until it is
 *   ready, every search walks (or runs rg) as without it.
 * - Every directory it holds is watched (one inotify watch each, set before the directory is
 *   read, so no change between the read and the watch is lost). An event marks the directory,
 *   and the name it reports, to be read again.
 * - Before it answers, a search passes the event barrier (event-barrier.ts): every change made
 *   before the search has been reported. Then the marked directories are read again (and a
 *   named child directory, or a changed .gitignore, walked again below). Only then it answers.
 * - It is dropped, and searches walk, when unsure: a watch that fails (the watch limit, a mount
 *   without events), a barrier that does not come back, the root replaced; it is never built for
 *   a tree over the entry budget, or on a mount that is not local.
 */
import * as NFS from "node:fs"
import { performance } from "node:perf_hooks"
import { Effect, type PlatformError, Semaphore } from "effect"
import type { LocalFs } from "../../fs/local-fs.ts"
import { basenameOf, childPath } from "../../path/path.ts"
import { compileModelGlob } from "../../text/glob.ts"
import { isRefusal } from "../../text/regex.ts"
import { type FileList, SearchFailed } from "./backend.ts"
import { ContentIndex } from "./content-index.ts"
import type { EventBarrier } from "./event-barrier.ts"
import type { GramQuery } from "./grams.ts"
import { type TreeRequest, treeFromIndex } from "./tree.ts"
import { unreadableNote, type WalkEntry, type WalkResult, walkTree } from "./walk.ts"
import { byWalkOrder, inPathOrder } from "./walk-order.ts"

/** What the index keeps of one directory the walk entered. */
export interface Dir {
  readonly entries: ReadonlyArray<WalkEntry>
  /** Default-skip folders directly in it. */
  readonly skipped: ReadonlyArray<string>
  readonly unreadable: boolean
}

export interface WarmIndexOptions {
  readonly root: string
  /** Most entries (files and directories) held; a larger tree gets no index. */
  readonly maxEntries: number
  /** Marked directories past which a search walks and the index is built again. */
  readonly maxPending: number
  readonly barrier: EventBarrier
  /** Most bytes grep's n-gram filters may take (content-index.ts); 0: none. */
  readonly maxGramBytes: number
}

export type IndexState = "idle" | "building" | "ready" | "off"

export interface WarmIndex {
  readonly state: () => IndexState
  /** Starts the build when idle (in the background: the caller forks it). */
  readonly build: Effect.Effect<void, never, LocalFs>
  /** The files below `dir` (the walk's answer), or undefined when the index cannot answer. */
  readonly listFiles: (dir: string, nameGlob?: string) => Effect.Effect<FileList | undefined, SearchFailed, LocalFs>
  /**
   * The files below `dir` that may match `query` and pass `keep` (grep's include and type),
   * with the walk's notes; undefined when the index cannot answer (or the n-gram part is not
   * ready, or off).
   */
  readonly grepCandidates: (
    dir: string,
    query: GramQuery,
    keep: (path: string) => boolean
  ) => Effect.Effect<FileList | undefined, SearchFailed, LocalFs>
  /** The walk's answer for ls (walkTree with these options), or undefined when the index cannot give it. */
  readonly tree: (request: TreeRequest) => Effect.Effect<WalkResult | undefined, never, LocalFs>
  /** Whether more than `count` entries are held below `dir` (read without waiting for events: a hint only). */
  readonly holdsMore: (dir: string, count: number) => boolean
  /** Indexes the contents queued (in slices, under the lock); started by the caller when `contentPending`. */
  readonly indexContents: Effect.Effect<void>
  readonly contentPending: () => boolean
  /** Entries held, for the memory budget and the bench. */
  readonly size: () => number
  /** Bytes the n-gram filters take, and files indexed. */
  readonly contentSize: () => { readonly bytes: number; readonly files: number; readonly ready: boolean }
  readonly close: () => void
}

export const makeWarmIndex = (options: WarmIndexOptions): WarmIndex => {
  const { root } = options
  let state: IndexState = "idle"
  let dirs = new Map<string, Dir>()
  /** Directories with events since they were read: the names reported (undefined: all of it). */
  let pending = new Map<string, Set<string> | undefined>()
  let watchers = new Map<string, NFS.FSWatcher>()
  let rootIno: number | undefined
  let entries = 0
  const content = new ContentIndex({ maxBytes: options.maxGramBytes })
  let contentRunning = false
  // One reader or updater at a time: an update is several steps over the maps.
  const lock = Semaphore.makeUnsafe(1).withPermits(1)

  const mark = (dir: string, name: string | null | undefined) => {
    if (state !== "ready" && state !== "building") return
    const names = pending.has(dir) ? pending.get(dir) : new Set<string>()
    if (names === undefined) return
    if (typeof name === "string" && name !== "" && !name.includes("/")) {
      names.add(name)
      pending.set(dir, names)
    } else pending.set(dir, undefined)
  }

  const drop = (next: IndexState) => {
    for (const w of watchers.values()) w.close()
    watchers = new Map()
    dirs = new Map()
    pending = new Map()
    entries = 0
    content.reset()
    state = next
  }

  /** Watches `dir` before it is read, so that no change after the read goes unreported. */
  const watch = (dir: string): void => {
    if (watchers.has(dir)) return
    // A directory that cannot be watched (the watch limit, a mount without events) would go stale.
    const w = NFS.watch(dir, { persistent: false }, (_event, name) => mark(dir, name))
    w.on("error", () => mark(dir, undefined))
    watchers.set(dir, w)
  }

  const put = (path: string, dir: Dir) => {
    entries += dir.entries.length - (dirs.get(path)?.entries.length ?? 0)
    dirs.set(path, dir)
    content.dirRead(path)
  }

  /**
   * Walks `dir` (its subtree, or with `own` only its entries) into the index, watching each
   * directory first. `paced` (the build): reads are synchronous, so the walk lets the event loop
   * turn every few milliseconds, and the search that started the build is not held up by it.
   */
  const walkInto = (dir: string, own: boolean, paced = false) =>
    Effect.map(
      walkTree({
        root,
        dir,
        maxEntries: options.maxEntries,
        onDir: watch,
        ...(own ? { maxDepth: 0 } : {}),
        ...(paced ? { pace } : {})
      }),
      (walked) => {
        const unreadable = new Set(walked.unreadable)
        const skippedBy = new Map<string, Array<string>>()
        for (const s of walked.skipped) {
          const parent = s.slice(0, s.lastIndexOf("/")) || "/"
          skippedBy.set(parent, [...(skippedBy.get(parent) ?? []), s])
        }
        for (const d of walked.dirs) {
          put(d.path, { entries: d.entries, skipped: skippedBy.get(d.path) ?? [], unreadable: unreadable.has(d.path) })
        }
        if (!walked.complete || entries > options.maxEntries) throw new TooLarge()
      }
    )

  /** Removes `dir` and everything below it, closing their watches. */
  const forget = (dir: string) => {
    const stack = [dir]
    while (stack.length > 0) {
      const d = stack.pop()!
      const held = dirs.get(d)
      if (held === undefined) continue
      for (const e of held.entries) {
        if (e.kind === "dir") stack.push(e.path)
        else content.fileChanged(e.path)
      }
      entries -= held.entries.length
      dirs.delete(d)
      watchers.get(d)?.close()
      watchers.delete(d)
    }
  }

  /** A child directory walked again from scratch; one that cannot be read is held as the walk shows it. */
  const rewalk = (dir: string) =>
    walkInto(dir, false).pipe(
      Effect.catchTag("PlatformError", () =>
        Effect.sync(() => put(dir, { entries: [], skipped: [], unreadable: true }))
      )
    )

  /**
   * Reads a marked directory again. A child directory that is new, or named by an event (it may
   * have been replaced: its watch followed the old one), is walked again; one that is gone is
   * forgotten; a changed .gitignore changes what is kept below, so the whole subtree is walked.
   */
  const refresh = (dir: string, names: Set<string> | undefined) =>
    Effect.suspend(() => {
      const held = dirs.get(dir)
      if (held === undefined) return Effect.void
      if (names === undefined || names.has(".gitignore")) {
        forget(dir)
        return dir === root ? walkInto(dir, false) : rewalk(dir)
      }
      // A named file changed, went or came: its filter goes (a new one is made when the directory is indexed).
      for (const name of names) content.fileChanged(childPath(dir, name))
      const oldDirs = held.entries.filter((e) => e.kind === "dir").map((e) => e.path)
      return walkInto(dir, true).pipe(
        Effect.flatMap(() => {
          const now = (dirs.get(dir)?.entries ?? []).filter((e) => e.kind === "dir")
          const nowPaths = new Set(now.map((e) => e.path))
          for (const old of oldDirs) if (!nowPaths.has(old) || names.has(basenameOf(old))) forget(old)
          const again = now.filter((e) => !dirs.has(e.path))
          return Effect.forEach(again, (e) => rewalk(e.path), { discard: true })
        })
      )
    })

  /** Applies every marked directory, shallowest first (a parent's update may forget a child's). */
  const catchUp: Effect.Effect<void, PlatformError.PlatformError, LocalFs> = Effect.suspend(() => {
    if (pending.size === 0) return Effect.void
    const batch = [...pending].sort(([a], [b]) => a.length - b.length)
    pending = new Map()
    return Effect.forEach(batch, ([dir, names]) => refresh(dir, names), { discard: true }).pipe(
      Effect.flatMap(() => catchUp)
    )
  })

  const answer = (dir: string, nameGlob: string | undefined): FileList | undefined => {
    const top = dirs.get(dir)
    if (top === undefined || top.unreadable) return undefined
    const nameMatches = nameGlob === undefined ? undefined : compileModelGlob(nameGlob)
    if (nameMatches !== undefined && isRefusal(nameMatches)) {
      throw new SearchFailed({ message: `Invalid glob ${JSON.stringify(nameGlob)}: ${nameMatches.reason}` })
    }
    // The files: depth-first, each directory's entries in path order, so they come sorted and
    // glob sorts nothing. The directories with notes (skipped folders, unreadable) are few.
    const files: Array<string> = []
    const noted: Array<readonly [string, Dir]> = []
    const stack: Array<WalkEntry> = []
    const enter = (path: string, held: Dir) => {
      if (held.skipped.length > 0 || (held.unreadable && path !== dir)) noted.push([path, held])
      const ordered = inPathOrder(held.entries)
      for (let i = ordered.length - 1; i >= 0; i--) stack.push(ordered[i]!)
    }
    enter(dir, top)
    while (stack.length > 0) {
      const e = stack.pop()!
      if (e.kind === "dir") {
        const held = dirs.get(e.path)
        if (held === undefined) return undefined
        enter(e.path, held)
      } else if (e.kind === "file" && (nameMatches === undefined || nameMatches(e.name))) files.push(e.path)
    }
    // The notes breadth-first, as the walk goes, so they name the same directories first.
    noted.sort(([a], [b]) => byWalkOrder(a, b))
    const skipped = noted.flatMap(([, held]) => held.skipped)
    const unreadable = noted.flatMap(([path, held]) => (held.unreadable && path !== dir ? [path] : []))
    return { files, sorted: true, notes: unreadableNote(unreadable), skipped, backend: "index" }
  }

  const build = Effect.suspend(() => {
    if (state !== "idle") return Effect.void
    state = "building"
    rootIno = statIno(root)
    return walkInto(root, false, true).pipe(
      Effect.andThen(
        Effect.sync(() => {
          if (state === "building") state = "ready"
        })
      ),
      Effect.catchCause(() => Effect.sync(() => drop(state === "building" ? "off" : state))),
      lock
    )
  })

  /**
   * `f` over the index once every change made before now is in it (the barrier, then the marked
   * directories read again); undefined when the index cannot answer.
   */
  const fresh = <A>(f: () => A | undefined): Effect.Effect<A | undefined, SearchFailed, LocalFs> =>
    Effect.suspend(() => {
      if (state !== "ready") return Effect.succeed(undefined)
      return Effect.flatMap(
        Effect.promise(() => options.barrier.pass()),
        (delivered): Effect.Effect<A | undefined, SearchFailed, LocalFs> => {
          // Unsure whether every change was reported, or too much changed: walk, and build again later.
          if (state !== "ready") return Effect.succeed(undefined)
          if (!delivered || statIno(root) !== rootIno || pending.size > options.maxPending) {
            drop("idle")
            return Effect.succeed(undefined)
          }
          return catchUp.pipe(
            Effect.flatMap(() =>
              Effect.try({
                try: f,
                catch: (e) => (e instanceof SearchFailed ? e : new SearchFailed({ message: String(e) }))
              })
            ),
            Effect.catchCause((cause) => {
              const failed = cause.reasons.find((r) => r._tag === "Fail")
              if (failed !== undefined && failed.error instanceof SearchFailed) return Effect.fail(failed.error)
              drop(cause.reasons.some((r) => r._tag === "Die" && r.defect instanceof TooLarge) ? "off" : "idle")
              return Effect.succeed(undefined)
            })
          )
        }
      ).pipe(lock)
    })

  const listFiles = (dir: string, nameGlob?: string) => fresh(() => answer(dir, nameGlob))

  const grepCandidates = (dir: string, query: GramQuery, keep: (path: string) => boolean) =>
    // Not ready: no barrier to pay for an answer that would be dropped.
    !content.ready()
      ? Effect.succeed(undefined)
      : fresh(() => {
          if (!content.ready()) return undefined
          const listed = answer(dir, undefined)
          if (listed === undefined) return undefined
          return { ...listed, files: content.candidates(listed.files.filter(keep), query) }
        })

  let lastTurn = 0
  const pace: Effect.Effect<void> = Effect.suspend(() =>
    performance.now() - lastTurn < SLICE_MS
      ? Effect.void
      : Effect.promise(nextTurn).pipe(
          Effect.andThen(
            Effect.sync(() => {
              lastTurn = performance.now()
            })
          )
        )
  )

  const filesOf = (dir: string): ReadonlyArray<string> | undefined =>
    dirs.get(dir)?.entries.flatMap((e) => (e.kind === "file" ? [e.path] : []))

  /** Slices of content indexing until the queue is empty, yielding to the event loop between them. */
  const indexContents: Effect.Effect<void> = Effect.suspend(() => {
    if (contentRunning) return Effect.void
    contentRunning = true
    const slice: Effect.Effect<void> = Effect.flatMap(
      lock(Effect.sync(() => state !== "ready" || content.work(filesOf, SLICE_MS))),
      (done) => (done ? Effect.void : Effect.andThen(Effect.promise(nextTurn), slice))
    )
    return Effect.ensuring(
      slice,
      Effect.sync(() => {
        contentRunning = false
      })
    )
  })

  const holdsMore = (dir: string, count: number): boolean => {
    let seen = 0
    const stack = [dir]
    while (stack.length > 0) {
      const held = dirs.get(stack.pop()!)
      if (held === undefined) continue
      seen += held.entries.length
      if (seen > count) return true
      for (const e of held.entries) if (e.kind === "dir") stack.push(e.path)
    }
    return false
  }

  return {
    state: () => state,
    size: () => entries,
    contentSize: () => ({ bytes: content.bytes(), files: content.indexed(), ready: content.ready() }),
    close: () => drop("off"),
    build,
    listFiles,
    grepCandidates,
    tree: (request) =>
      fresh(() => treeFromIndex(dirs, request)).pipe(Effect.orElseSucceed((): WalkResult | undefined => undefined)),
    holdsMore,
    indexContents,
    contentPending: () => state === "ready" && !contentRunning && content.hasWork()
  }
}

/** The tree has more entries than the budget: no index rather than a partial one. */
class TooLarge extends Error {}

/** How long the build and the content indexing run before they let the event loop turn. */
const SLICE_MS = 8

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve))

const statIno = (path: string): number | undefined => {
  try {
    const st = NFS.statSync(path)
    return st.ino
  } catch {
    return undefined
  }
}
