/**
 * The native WriteFs layer's steps: node:fs — landing.ts for where a write lands, path-lock.ts
 * for the machine's lock files, staging.ts for the staging folder (recovered once per process),
 * load-file.ts, atomic-write.ts and patch-commit.ts. The FileSystem it is built with does the
 * renames (and the real paths the locks are keyed by).
 */
import * as NFS from "node:fs"
import { Effect, FileSystem } from "effect"
import { processWide } from "../process-wide/process-wide.ts"
import { commitFile, stageFile } from "./atomic-write.ts"
import { landingPath } from "./landing.ts"
import { loadFile } from "./load-file.ts"
import { nativeMakeParent } from "./make-folders.ts"
import { commitWith, nativeCommitSteps } from "./patch-commit.ts"
import { recoverExclusively, withFileLocksOn } from "./path-lock.ts"
import { makeStagingFolder } from "./staging.ts"
import type { WriteSteps } from "./write-fs-shape.ts"

/** Staging folders recovered by this process: a process recovers each once, on its first write. */
const recoveredFolders = processWide("recovered staging folders", () => new Set<string>())

/**
 * Each root's staging folder, made on its first write and remembered by this layer instance
 * (so two systems, or two tests, keep their own; the folder on disk is the same).
 */
const makeStagingOf = () => {
  const folders = new Map<string, string>()
  return (realRoot: string): Effect.Effect<string | undefined> =>
    Effect.suspend(() => {
      let staging = folders.get(realRoot)
      if (staging === undefined) {
        try {
          staging = makeStagingFolder(realRoot)
        } catch {
          return Effect.succeed(undefined)
        }
        folders.set(realRoot, staging)
      }
      const recovered = recoveredFolders.get()
      if (recovered.has(staging)) return Effect.succeed(staging)
      const folder = staging
      return Effect.as(
        Effect.tap(recoverExclusively(folder), () => Effect.sync(() => recovered.add(folder))),
        folder
      )
    })
}

export const nativeWriteSteps = (fs: FileSystem.FileSystem): WriteSteps => {
  const withFs = Effect.provideService(FileSystem.FileSystem, fs)
  return {
    landing: (abs) => Effect.sync(() => landingPath(abs)),
    staging: makeStagingOf(),
    lockFiles: (targets, staging, effect) => withFileLocksOn(fs, targets, staging, effect),
    load: loadFile,
    makeParent: nativeMakeParent,
    write: (target, bytes, staging, expect, folder) =>
      Effect.flatMap(stageFile(target, bytes, staging, expect), (temp) =>
        withFs(commitFile(temp, target, staging, folder))
      ),
    commit: (changes, staging) => commitWith(nativeCommitSteps(fs, staging), changes),
    mtimeOf: (target) => Effect.sync(() => NFS.statSync(target, { throwIfNoEntry: false })?.mtimeMs)
  }
}
