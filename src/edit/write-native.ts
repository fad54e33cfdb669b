/**
 * The native WriteFs layer: today's node:fs machinery behind the service — landing.ts for where
 * a write lands, path-lock.ts for the process's and the machine's locks, staging.ts for the
 * staging folder (recovered once per process), load-file.ts, atomic-write.ts and
 * patch-commit.ts. The FileSystem it is built with does the renames (and the real paths the
 * locks are keyed by), as before the service existed.
 */
import * as NFS from "node:fs"
import { Effect, FileSystem } from "effect"
import { commitFile, stageFile } from "./atomic-write.ts"
import { landingPath } from "./landing.ts"
import { loadFile } from "./load-file.ts"
import { commitWith, nativeCommitSteps } from "./patch-commit.ts"
import { recoverExclusively, withPathLocksOn } from "./path-lock.ts"
import { stagingFolder } from "./staging.ts"
import type { WriteFsShape } from "./write-fs-shape.ts"

/** Staging folders recovered by this process: a process recovers each once, on its first write. */
const recovered = new Set<string>()

const stagingOf = (realRoot: string): Effect.Effect<string | undefined> =>
  Effect.suspend(() => {
    let staging: string
    try {
      staging = stagingFolder(realRoot)
    } catch {
      return Effect.succeed(undefined)
    }
    if (recovered.has(staging)) return Effect.succeed(staging)
    return Effect.as(
      Effect.tap(recoverExclusively(staging), () => Effect.sync(() => recovered.add(staging))),
      staging
    )
  })

export const makeNativeWriteFs = (fs: FileSystem.FileSystem): WriteFsShape => {
  const withFs = Effect.provideService(FileSystem.FileSystem, fs)
  return {
    landing: (abs) => Effect.sync(() => landingPath(abs)),
    staging: stagingOf,
    withLocks: (targets, staging, effect) => withPathLocksOn(fs, targets, staging, effect),
    load: loadFile,
    write: (target, bytes, staging) =>
      Effect.flatMap(stageFile(target, bytes, staging), (temp) => withFs(commitFile(temp, target, staging))),
    commit: (changes, staging) => commitWith(nativeCommitSteps(fs, staging), changes),
    mtimeOf: (target) => Effect.sync(() => NFS.statSync(target, { throwIfNoEntry: false })?.mtimeMs)
  }
}
