/**
 * What a write needs before it starts: where the path really lands (WriteFs.landing — the
 * target locked, read and written), checked to stay inside the project when the path was
 * given inside it, and the project's staging folder (WriteFs.staging).
 */
import { Effect } from "effect"
import { within } from "../permission/containment.ts"
import type { WriteFsShape } from "./write-fs.ts"

export interface WriteAccess {
  /** The real path the write lands on. */
  readonly target: string
  /** The staging folder, or undefined when the project has none (temps then go beside the target). */
  readonly staging: string | undefined
}

/** Why a path can never be written as given, or undefined. */
export const pathProblem = (path: string): string | undefined =>
  path.includes("\0")
    ? `The path ${JSON.stringify(path)} contains a NUL byte, which no file name can hold (the system would cut the path there and write elsewhere). Send the path without it.`
    : undefined

const isLexicallyInside = (root: string, abs: string) => within(root, abs)

/**
 * The write access for `abs` (absolute, resolved against `root`), or a refusal: a NUL byte, a
 * link loop, or a path inside the project whose links lead out of it (a dangling link
 * included: the write would create the file at its target).
 */
export const writeAccess = (
  writes: WriteFsShape,
  root: string,
  abs: string,
  shown: string
): Effect.Effect<WriteAccess, string> =>
  Effect.gen(function* () {
    const problem = pathProblem(abs)
    if (problem !== undefined) return yield* Effect.fail(problem)
    const target = yield* writes.landing(abs)
    if (target === undefined) {
      return yield* Effect.fail(`${shown} is a loop of symbolic links; nothing was changed. Fix or remove the link.`)
    }
    const realRoot = (yield* writes.landing(root)) ?? root
    if (isLexicallyInside(root, abs) && !within(realRoot, target)) {
      return yield* Effect.fail(
        `${shown} is inside the project, but a symbolic link on its path leads outside it: the write would land on ${target}. Nothing was changed. Write to a file inside the project, or name ${target} itself (which asks for permission).`
      )
    }
    return { target, staging: yield* writes.staging(realRoot) }
  })
