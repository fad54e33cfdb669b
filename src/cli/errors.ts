/**
 * How a command ends other than with success. The runner (app.ts) turns these into exit codes:
 * a `Misuse` is printed and exits 2, an `ExitCode` carries a code whose story is already told.
 */
import { Data } from "effect"
import { readableError } from "../tool/readable-error.ts"

export const EXIT_OK = 0
/** A call whose status is not "ok" (or an internal error). */
export const EXIT_FAILED = 1
/** The command line was wrong: unknown flag, bad value, missing TOOL, unreadable file. */
export const EXIT_MISUSE = 2
/** Stopped by Ctrl-C (`run`) or SIGTERM. */
export const EXIT_INTERRUPTED = 130
export const EXIT_TERMINATED = 143

/** The person invoked the CLI wrongly; `message` says what to fix. */
export class Misuse extends Data.TaggedError("Misuse")<{ readonly message: string }> {}

/** The command already wrote its output; the process should exit with `code`. */
export class ExitCode extends Data.TaggedError("ExitCode")<{ readonly code: number }> {}

/** The readable part of an unknown failure (never Effect's internal names). */
export const describeError = readableError
