/**
 * The search backend with the warm index in front (warm-index.ts): glob's file lists come from
 * the index once it is ready and fresh, everything else (and every list it cannot give) from
 * the backend behind it, as without the index. `searchIndexLayer` provides it as the
 * `CurrentSearchBackend` for a project root; `FREECODE_INDEX=0` turns it off (the layer then
 * provides nothing and the default backend answers). docs/search.md.
 */
import { Context, Effect, Layer, Scope } from "effect"
import { LocalFs } from "../../fs/local-fs.ts"
import { isOnLocalMount, readMountTable } from "../../fs/local-mounts.ts"
import { CurrentSearchBackend } from "./auto.ts"
import type { SearchBackend } from "./backend.ts"
import { makeEventBarrier } from "./event-barrier.ts"
import { makeWarmIndex, type WarmIndex } from "./warm-index.ts"

export interface IndexedBackend extends SearchBackend {
  readonly index: WarmIndex
}

export interface SearchIndexOptions {
  /** Most files and directories held (default 400,000: ~60 MB, docs/search.md); a larger tree gets no index. */
  readonly maxEntries?: number
  /** Directories changed between two searches past which the search walks and the index is rebuilt (default 5,000). */
  readonly maxPending?: number
  /** Build at once instead of on the first search. */
  readonly eager?: boolean
}

export const DEFAULT_MAX_ENTRIES = 400_000
export const DEFAULT_MAX_PENDING = 5_000

/**
 * Wraps `fallback`: `listFiles` for a directory under `root` is answered by the index when it
 * can; the first such call starts the build (`start` runs it in the background).
 */
export const makeIndexedBackend = (
  root: string,
  index: WarmIndex,
  fallback: SearchBackend,
  start: (build: Effect.Effect<void, never, LocalFs>) => Effect.Effect<void>
): IndexedBackend => ({
  name: fallback.name,
  index,
  grep: fallback.grep,
  listFiles: (request) =>
    Effect.flatMap(LocalFs, (fs) => {
      // Another root, or files a child process would not see: the index holds neither.
      if (!fs.onDisk || request.root !== root) return fallback.listFiles(request)
      const state = index.state()
      if (state === "idle") return Effect.andThen(start(index.build), fallback.listFiles(request))
      if (state !== "ready") return fallback.listFiles(request)
      return Effect.flatMap(index.listFiles(request.dir, request.nameGlob), (listed) =>
        listed === undefined ? fallback.listFiles(request) : Effect.succeed(listed)
      )
    })
})

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
      const start = (build: Effect.Effect<void, never, LocalFs>) =>
        Effect.asVoid(Effect.forkIn(Effect.provideService(build, LocalFs, localFs), scope))
      const backend = makeIndexedBackend(root, index, fallback, start)
      if (options.eager === true) yield* start(index.build)
      return Context.make(CurrentSearchBackend, backend as SearchBackend)
    })
  )
