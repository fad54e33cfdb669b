/**
 * Where the `memory` tool keeps a project's memories: `<state>/projects/<project>/memories`
 * (docs/session.md), beside the session database, so they persist across sessions and
 * processes whether or not the session database is used.
 */
import { join } from "node:path"
import { type Config, Context, Effect, Layer } from "effect"
import { projectStateDir, stateDirConfig } from "./location.ts"

export class MemoryFolder extends Context.Service<MemoryFolder, { readonly dir: string }>()("freecode/MemoryFolder") {
  /** The project's memory folder under the state folder (default: FREECODE_STATE_DIR, XDG, ~/.local/state). */
  static readonly layer = (options: {
    readonly root: string
    readonly stateDir?: string
  }): Layer.Layer<MemoryFolder, Config.ConfigError> =>
    Layer.effect(
      MemoryFolder,
      Effect.gen(function* () {
        const stateDir = options.stateDir ?? (yield* stateDirConfig)
        return MemoryFolder.of({ dir: join(projectStateDir(stateDir, options.root), "memories") })
      })
    )
  /** A given folder (tests, embedders with their own layout). */
  static readonly layerAt = (dir: string) => Layer.succeed(MemoryFolder, MemoryFolder.of({ dir }))
}
