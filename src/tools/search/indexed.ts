/**
 * The search backend with the warm index in front (warm-index.ts): glob's file lists, grep's
 * candidate files (content-index.ts) and ls's listings come from the index once it is ready
 * and fresh, everything else (and every answer it cannot give) from the backend behind it, as
 * without the index. grep's candidates are searched by the backend behind (rg, or the walk's
 * matcher), so its matches are that matcher's. `searchIndexLayer` provides it as the
 * `CurrentSearchBackend` for a project root; `FREECODE_INDEX=0` turns it off (the layer then
 * provides nothing and the default backend answers). docs/search.md.
 */
import { Context, Effect, Layer, Scope } from "effect"
import { LocalFs } from "../../fs/local-fs.ts"
import { isOnLocalMount, readMountTable } from "../../fs/local-mounts.ts"
import { basenameOf } from "../../path/path.ts"
import { CurrentSearchBackend } from "./auto.ts"
import type { GrepRequest, SearchBackend } from "./backend.ts"
import { makeEventBarrier } from "./event-barrier.ts"
import { fileTypeMatcher } from "./file-types.ts"
import { gramQuery } from "./literals.ts"
import type { TreeRequest } from "./tree.ts"
import { compileInclude, compileRegex, type WalkResult } from "./walk.ts"
import { makeWarmIndex, type WarmIndex } from "./warm-index.ts"

export interface IndexedBackend extends SearchBackend {
  readonly index: WarmIndex
  /** ls's listing (walkTree's result) from the index, when it holds `dir` and it pays; else undefined. */
  readonly tree: (request: TreeRequest) => Effect.Effect<WalkResult | undefined, never, LocalFs>
}

export const isIndexed = (backend: SearchBackend): backend is IndexedBackend => "index" in backend

/** ls asks the index only for a directory with more entries below it than this: a small one reads faster than a barrier. */
export const LS_INDEX_MIN_ENTRIES = 500
/** More candidate files than this, and grep runs over the whole tree instead (little saved). */
export const MAX_CANDIDATES = 4000
/**
 * Candidates whose paths add up to more than this: the whole tree instead. rg takes them on its
 * command line, and one too long for the kernel (E2BIG) fails the spawn, which would retire rg.
 */
const MAX_CANDIDATE_CHARS = 256 * 1024

const tooMany = (files: ReadonlyArray<string>): boolean => {
  if (files.length > MAX_CANDIDATES) return true
  let chars = 0
  for (const f of files) chars += f.length + 1
  return chars > MAX_CANDIDATE_CHARS
}

export interface SearchIndexOptions {
  /** Most files and directories held (default 400,000: ~60 MB, docs/search.md); a larger tree gets no index. */
  readonly maxEntries?: number
  /** Directories changed between two searches past which the search walks and the index is rebuilt (default 5,000). */
  readonly maxPending?: number
  /** Build at once instead of on the first search. */
  readonly eager?: boolean
  /** Most bytes grep's n-gram filters may take (default 64 MB, docs/search.md); 0: no n-gram part. */
  readonly maxGramBytes?: number
  /** ls lists a directory from the index when more entries than this are below it (default LS_INDEX_MIN_ENTRIES). */
  readonly lsMinEntries?: number
}

export const DEFAULT_MAX_ENTRIES = 400_000
export const DEFAULT_MAX_PENDING = 5_000
export const DEFAULT_MAX_GRAM_BYTES = 64 * 1024 * 1024

/** grep's include and type as one test on a file's name; a SearchFailed when include does not compile. */
const nameFilter = (request: GrepRequest) => {
  const include = request.include === undefined ? undefined : compileInclude(request.include)
  if (include !== undefined && !(typeof include === "function")) return include
  const ofType = request.type === undefined ? undefined : fileTypeMatcher(request.type)
  return (path: string) => {
    const name = basenameOf(path)
    return (include === undefined || include(name)) && (ofType === undefined || ofType(name))
  }
}

/**
 * Wraps `fallback`: under `root`, `listFiles` (glob), `grep` and `tree` (ls) are answered from
 * the index when it can; the first such call starts the build (`start` runs it, and the content
 * indexing after it, in the background).
 */
export const makeIndexedBackend = (
  root: string,
  index: WarmIndex,
  fallback: SearchBackend,
  start: (work: Effect.Effect<void, never, LocalFs>) => Effect.Effect<void>,
  lsMinEntries = LS_INDEX_MIN_ENTRIES
): IndexedBackend => {
  /** Starts the build when idle; after an answer, the content indexing that events queued. */
  const kick = Effect.suspend(() => {
    if (index.state() === "idle") return start(Effect.andThen(index.build, index.indexContents))
    return index.contentPending() ? start(index.indexContents) : Effect.void
  })
  /** The index's answer when it is ready and gives one, else the fallback's. */
  const viaIndex = <A, E, E2, R>(
    fromIndex: Effect.Effect<A | undefined, E, LocalFs>,
    otherwise: Effect.Effect<A, E2, R>
  ): Effect.Effect<A, E | E2, R | LocalFs> =>
    Effect.flatMap(LocalFs, (fs) => {
      if (!fs.onDisk) return otherwise
      // The build starts once this answer is given: it reads synchronously, and started first it
      // held the answer back until it ended (bench/search.ts's first call).
      if (index.state() !== "ready") return Effect.tap(otherwise, () => kick)
      return Effect.flatMap(fromIndex, (answer) =>
        Effect.andThen(kick, answer === undefined ? otherwise : Effect.succeed(answer))
      )
    })

  return {
    name: fallback.name,
    index,
    ...(fallback.grepFiles === undefined ? {} : { grepFiles: fallback.grepFiles }),
    // Another root: the index holds none of it.
    listFiles: (request) =>
      request.root !== root
        ? fallback.listFiles(request)
        : viaIndex(index.listFiles(request.dir, request.nameGlob), fallback.listFiles(request)),
    grep: (request) => {
      const grepFiles = fallback.grepFiles
      // One file, another root, or a pattern the walk's engine refuses (rg's message is the one to give).
      if (request.root !== root || request.isFile || grepFiles === undefined) return fallback.grep(request)
      const caseInsensitive = request.caseInsensitive === true
      if ("_tag" in compileRegex(request.pattern, { caseInsensitive })) return fallback.grep(request)
      // No literal every match must hold: the full search (rg) is the fastest way.
      const query = gramQuery(request.pattern, caseInsensitive)
      const keep = nameFilter(request)
      if (query === undefined || typeof keep !== "function") return fallback.grep(request)
      return Effect.flatMap(
        viaIndex(index.grepCandidates(request.path, query, keep), Effect.succeed(undefined)),
        (listed) =>
          listed === undefined || listed.notes.length > 0 || tooMany(listed.files)
            ? fallback.grep(request)
            : Effect.map(grepFiles(request, listed.files), (found) => ({
                ...found,
                skipped: listed.skipped,
                backend: "index" as const
              }))
      )
    },
    tree: (request) =>
      request.root !== root || !index.holdsMore(request.dir, lsMinEntries)
        ? Effect.succeed(undefined)
        : viaIndex(index.tree(request), Effect.succeed(undefined))
  }
}

/** Whether the environment turns the index off (`FREECODE_INDEX=0`), read when the layer is built. */
export const indexDisabled = (): boolean => process.env.FREECODE_INDEX === "0"

/**
 * The indexed backend for `root` as the `CurrentSearchBackend`, over the backend the context
 * had. Its watches and its build end with the layer. Off (nothing provided) with
 * `FREECODE_INDEX=0`, when LocalFs's files are not on this machine's disk, when the root is not
 * on a local mount (local-mounts.ts), or when no event barrier can be set up.
 */
export const searchIndexLayer = (root: string, options: SearchIndexOptions = {}): Layer.Layer<never, never, LocalFs> =>
  Layer.effectContext(
    Effect.gen(function* () {
      const localFs = yield* LocalFs
      const fallback = yield* CurrentSearchBackend
      const unchanged = Context.empty()
      // A network or FUSE mount may change without an event reaching this machine: no index there.
      if (indexDisabled() || !localFs.onDisk || !isOnLocalMount(root, readMountTable())) return unchanged
      const barrier = makeEventBarrier()
      if (barrier === undefined) return unchanged
      const index = makeWarmIndex({
        root,
        maxEntries: options.maxEntries ?? DEFAULT_MAX_ENTRIES,
        maxPending: options.maxPending ?? DEFAULT_MAX_PENDING,
        maxGramBytes: options.maxGramBytes ?? DEFAULT_MAX_GRAM_BYTES,
        barrier
      })
      const scope = yield* Scope.Scope
      yield* Scope.addFinalizer(
        scope,
        Effect.sync(() => {
          index.close()
          barrier.close()
        })
      )
      const start = (work: Effect.Effect<void, never, LocalFs>) =>
        Effect.asVoid(Effect.forkIn(Effect.provideService(work, LocalFs, localFs), scope))
      const backend = makeIndexedBackend(root, index, fallback, start, options.lsMinEntries)
      if (options.eager === true) yield* start(Effect.andThen(index.build, index.indexContents))
      return Context.make(CurrentSearchBackend, backend as SearchBackend)
    })
  )
