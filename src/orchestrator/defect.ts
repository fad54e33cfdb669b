/** A tool that throws — in a declaration, execute, validateInput or checkPermissions — is a ToolFailure, never a defect. */
import { Effect } from "effect"
import { SessionStoreError } from "../session/store.ts"
import { SharedStateError } from "../state/records.ts"
import { ToolFailure } from "../tool/errors.ts"
import { readableError } from "../tool/readable-error.ts"

/**
 * Saved state that is busy, damaged or out of reach (the session database, the shared store) is
 * not a bug: its message names the store and what to do. Undefined for any other defect.
 */
export const stateProblem = (defect: unknown): string | undefined =>
  defect instanceof SessionStoreError || defect instanceof SharedStateError ? defect.message : undefined

/** What a tool that threw comes back as. */
export const defectFailure = (toolId: string, defect: unknown): ToolFailure => {
  const state = stateProblem(defect)
  return new ToolFailure({
    message:
      state !== undefined
        ? `${toolId} could not use its saved state: ${state}`
        : `${toolId} failed unexpectedly (a bug in the tool, not in your call): ${readableError(defect)}`
  })
}

/** `effect`, with a defect of the tool's turned into a ToolFailure. */
export const guard = <A, E>(toolId: string, effect: Effect.Effect<A, E>): Effect.Effect<A, E | ToolFailure> =>
  Effect.catchDefect(effect, (defect) => Effect.fail(defectFailure(toolId, defect)))
