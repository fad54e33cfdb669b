/**
 * Picks the search backend: ripgrep while it works, the TypeScript walk from the moment rg is
 * found unusable (the package's platform binary is missing, or the binary cannot be spawned).
 * The call that discovers it is answered by the walk, so the model never sees the difference.
 * When LocalFs's files are not on this machine's disk (an in-memory FileSystem), rg could not
 * see them: the walk answers.
 *
 * Tools read the backend from the `CurrentSearchBackend` reference, so a test (or an embedder)
 * can force one with `Effect.provideService(CurrentSearchBackend, walkBackend)`.
 */
import { Context, Effect } from "effect"
import { LocalFs } from "../../fs/local-fs.ts"
import type { RipgrepUnavailable, SearchBackend, SearchError, SearchRequirements } from "./backend.ts"
import { loadRipgrepPath, makeRipgrepBackend } from "./ripgrep.ts"
import { walkBackend } from "./walk.ts"

export interface AutoBackendOptions {
  /** Where rg is; default: the binary of @vscode/ripgrep. */
  readonly ripgrepPath?: Effect.Effect<string, RipgrepUnavailable>
}

/** A backend that tries rg first and falls back to the walk for good once rg proves unusable. */
export const makeAutoBackend = (options: AutoBackendOptions = {}): SearchBackend => {
  const locate = options.ripgrepPath ?? loadRipgrepPath
  let rg: SearchBackend | undefined
  let unusable = false

  const withBackend = <A>(
    run: (backend: SearchBackend) => Effect.Effect<A, SearchError, SearchRequirements>
  ): Effect.Effect<A, SearchError, SearchRequirements> =>
    Effect.flatMap(LocalFs, (fs) => {
      if (unusable || !fs.onDisk) return run(walkBackend)
      const viaRg =
        rg !== undefined
          ? run(rg)
          : locate.pipe(
              Effect.flatMap((path) => {
                rg = makeRipgrepBackend(path)
                return run(rg)
              })
            )
      return viaRg.pipe(
        Effect.catchTag("RipgrepUnavailable", () =>
          Effect.suspend(() => {
            unusable = true
            return run(walkBackend)
          })
        )
      )
    })

  return {
    name: "auto",
    listFiles: (request) => withBackend((b) => b.listFiles(request)),
    grep: (request) => withBackend((b) => b.grep(request)),
    grepFiles: (request, files) =>
      withBackend((b) => (b.grepFiles === undefined ? b.grep(request) : b.grepFiles(request, files)))
  }
}

/** The process-wide default: one probe of rg per process. */
export const defaultSearchBackend: SearchBackend = makeAutoBackend()

/** The backend glob and grep use. */
export const CurrentSearchBackend = Context.Reference<SearchBackend>("freecode-tools/CurrentSearchBackend", {
  defaultValue: () => defaultSearchBackend
})
