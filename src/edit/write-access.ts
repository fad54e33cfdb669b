/**
 * What a write needs before it starts: where the path really lands (the target locked, read
 * and written), checked to stay inside the project when the path was given inside it, and the
 * project's staging folder.
 */
import { Effect } from "effect"
import { within } from "../permission/containment.ts"
import { WriteRefused, type WriteSteps } from "./write-fs-shape.ts"

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

/**
 * The write access for `abs` (absolute, resolved against `root`), or a refusal: a NUL byte, a
 * link loop, or a path inside the project whose links lead out of it (a dangling link
 * included: the write would create the file at its target).
 */
export const writeAccess = (
  steps: Pick<WriteSteps, "landing" | "staging">,
  root: string,
  abs: string,
  shown: string
): Effect.Effect<WriteAccess, WriteRefused> =>
  Effect.gen(function* () {
    const refuse = (message: string) => Effect.fail(new WriteRefused({ message }))
    const problem = pathProblem(abs)
    if (problem !== undefined) return yield* refuse(problem)
    const target = yield* steps.landing(abs)
    if (target === undefined) {
      return yield* refuse(`${shown} is a loop of symbolic links; nothing was changed. Fix or remove the link.`)
    }
    const realRoot = (yield* steps.landing(root)) ?? root
    if (within(root, abs) && !within(realRoot, target)) {
      return yield* refuse(
        `${shown} is inside the project, but a symbolic link on its path leads outside it: the write would land on ${target}. Nothing was changed. Write to a file inside the project, or name ${target} itself (which asks for permission).`
      )
    }
    return { target, staging: yield* steps.staging(realRoot) }
  })
