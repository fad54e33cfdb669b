/**
 * File-system failures as tool failures the model can act on: a missing path names similarly
 * named neighbours, any other error says what happened and what to do.
 */
import * as NodePath from "node:path"
import { Effect, type FileSystem, type PlatformError } from "effect"
import type { WriteRefused } from "../../edit/write-fs-shape.ts"
import { displayDir, displayPath } from "../../path/path.ts"
import { similarNames } from "../../path/similar-names.ts"
import { fail, type ToolFailure, TransientFailure } from "../../tool/errors.ts"
import { readableError } from "../../tool/readable-error.ts"

/**
 * The message for a path that does not exist: names up to 3 similarly named entries of the
 * same directory when there are any, or says that the directory itself is missing.
 */
export const notFoundMessage = (
  fs: FileSystem.FileSystem,
  root: string,
  abs: string,
  what = "File"
): Effect.Effect<string> =>
  Effect.gen(function* () {
    const dir = NodePath.dirname(abs)
    const base = `${what} not found: ${displayPath(root, abs)}.`
    const names = yield* fs.readDirectory(dir).pipe(Effect.option)
    if (names._tag === "None") {
      return `${base} Its directory ${displayDir(root, dir)} does not exist either; use glob to find the file.`
    }
    const similar = similarNames(NodePath.basename(abs), names.value)
    if (similar.length === 0) return `${base} Use glob or ls to find the right path.`
    const shown = similar.map((n) => displayPath(root, NodePath.join(dir, n)))
    return `${base} Did you mean ${shown.join(", ")}?`
  })

/** Turns an unexpected file-system error into a failure the model can act on. */
export const fsFailure = (
  e: PlatformError.PlatformError,
  root: string,
  abs: string
): ToolFailure | TransientFailure => {
  const shown = displayPath(root, abs)
  const reason = e.reason
  switch (reason._tag) {
    case "Busy":
    case "WouldBlock":
    case "TimedOut":
      return new TransientFailure({ message: `${shown} is busy (${reason._tag}); try again.` })
    case "PermissionDenied":
      return fail(`Permission denied: ${shown}. The file cannot be read by this process.`)
    case "NotFound":
      return fail(`Not found: ${shown}.`)
    default:
      return fail(`Cannot access ${shown}: ${readableError(e)}`)
  }
}

/** `stat`, failing with the did-you-mean message when the path does not exist. */
export const statOrFail = (
  fs: FileSystem.FileSystem,
  root: string,
  abs: string,
  what = "File"
): Effect.Effect<FileSystem.File.Info, ToolFailure | TransientFailure> =>
  fs
    .stat(abs)
    .pipe(
      Effect.catchTag("PlatformError", (e) =>
        e.reason._tag === "NotFound"
          ? Effect.flatMap(notFoundMessage(fs, root, abs, what), (message) => Effect.fail(fail(message)))
          : Effect.fail(fsFailure(e, root, abs))
      )
    )

/** A write transaction's own failures as tool failures: a refusal as given, a file-system error through `toFailure`. */
export const writeFailures =
  (toFailure: (e: PlatformError.PlatformError) => ToolFailure | TransientFailure) =>
  <A, R>(
    effect: Effect.Effect<A, ToolFailure | TransientFailure | WriteRefused | PlatformError.PlatformError, R>
  ): Effect.Effect<A, ToolFailure | TransientFailure, R> =>
    effect.pipe(
      Effect.catchTags({
        WriteRefused: (e) => Effect.fail(fail(e.message)),
        PlatformError: (e) => Effect.fail(toFailure(e))
      })
    )
