/** A tool that throws — in a declaration, execute, validateInput or checkPermissions — is a ToolFailure, never a defect. */
import { Effect } from "effect"
import { ToolFailure } from "../tool/errors.ts"
import { readableError } from "../tool/readable-error.ts"

/** What a tool that threw comes back as. */
export const defectFailure = (toolId: string, defect: unknown): ToolFailure =>
  new ToolFailure({
    message: `${toolId} failed unexpectedly (a bug in the tool, not in your call): ${readableError(defect)}`
  })

/** `effect`, with a defect of the tool's turned into a ToolFailure. */
export const guard = <A, E>(toolId: string, effect: Effect.Effect<A, E>): Effect.Effect<A, E | ToolFailure> =>
  Effect.catchDefect(effect, (defect) => Effect.fail(defectFailure(toolId, defect)))
