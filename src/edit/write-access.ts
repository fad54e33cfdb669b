/**
 * What a write needs before it starts: where the path really lands (the target locked, read
 * and written), checked to stay inside the project when the path was given inside it, and the
 * project's staging folder.
 */
import { Effect } from "effect"
import { within } from "../permission/containment.ts"
import type { CheckedBase, CheckedEntry, CheckedPath } from "../tool/tool.ts"
import { WriteRefused, type WriteSteps } from "./write-fs-shape.ts"

export interface WriteAccess {
  /** The real path the write lands on. */
  readonly target: string
  /** What the permission check found there (CheckedPath.entry): the file the write must replace; undefined: not looked at. */
  readonly entry?: CheckedEntry | null
  /** The folder the target is in when the check looked (CheckedPath.folder): the folder the change must be made in. */
  readonly folder?: CheckedEntry | null
  /** When that folder was missing: the deepest one there (CheckedPath.base), which the write makes the rest from. */
  readonly base?: CheckedBase
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
 * link loop, a path inside the project whose links lead out of it (a dangling link
 * included: the write would create the file at its target), or a path that lands elsewhere
 * than where the permission rules saw it land.
 */
export const writeAccess = (
  steps: Pick<WriteSteps, "landing" | "staging">,
  root: string,
  abs: string,
  shown: string,
  /** What the permission rules checked this path as, if they ran. */
  checked?: CheckedPath
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
    if (checked !== undefined && checked.real !== target) {
      // A link put in (or a folder on the way swapped for one) since the rules decided: they
      // decided on another file. The next call decides on this one.
      return yield* refuse(
        `${shown} changed after the permission check: it was checked as ${checked.real} and now leads to ${target}. Nothing was changed. Call again; where it leads now is checked afresh.`
      )
    }
    const staging = yield* steps.staging(realRoot)
    return {
      target,
      staging,
      ...(checked?.entry === undefined ? {} : { entry: checked.entry }),
      ...(checked?.folder === undefined ? {} : { folder: checked.folder }),
      ...(checked?.base === undefined ? {} : { base: checked.base })
    }
  })
