/**
 * The one module that builds a ToolResult, for every call: run, refused, or never resolved.
 * A failed call's message comes first, then whatever output it had.
 */
import { Result } from "effect"
import type { ToolError } from "../tool/errors.ts"
import type { ToolResult, ToolStatus } from "../tool/result.ts"
import type { Shaped } from "./cut.ts"
import type { Outcome, Recorded } from "./record.ts"

const STATUS: Record<ToolError["_tag"], ToolStatus> = {
  UnknownTool: "error",
  InvalidArguments: "error",
  ToolFailure: "error",
  TransientFailure: "error",
  PermissionDenied: "denied",
  ToolTimeout: "timeout",
  ToolInterrupted: "interrupted"
}

export interface ResultInput {
  readonly callId: string
  /** The tool's id, or the name as sent when it resolved to none. */
  readonly tool: string
  readonly outcome: Outcome
  readonly recorded: Recorded
  readonly shaped: Shaped
  /** What the path adds to the tool's own metadata (outputKind, coercedArgs, permission, hooks, via…). */
  readonly metadata: Readonly<Record<string, unknown>>
  readonly attempts: number
  readonly durationMs: number
}

const withMessage = (message: string, output: string, outputChars: number) =>
  outputChars === 0 ? message : `${message}\n${output}`

export const buildResult = (input: ResultInput): ToolResult => {
  const { outcome, recorded, shaped, tool } = input
  const error = Result.isFailure(outcome) ? outcome.failure : undefined
  const { view, stored } = recorded
  const outputChars = view.kind === "text" ? view.text.length : view.chars
  const own = Result.isSuccess(outcome)
    ? (outcome.success.metadata ?? {})
    : error?._tag === "ToolFailure"
      ? (error.metadata ?? {})
      : {}
  return {
    id: input.callId,
    tool,
    status: error === undefined ? "ok" : STATUS[error._tag],
    title: Result.isSuccess(outcome) ? outcome.success.title : `${tool}: ${error?._tag ?? "error"}`,
    modelOutput: error === undefined ? shaped.modelOutput : withMessage(error.message, shaped.modelOutput, outputChars),
    uiOutput: error === undefined ? shaped.uiOutput : withMessage(error.message, shaped.uiOutput, outputChars),
    ...(stored.stored ? { outputId: input.callId } : {}),
    outputChars,
    outputLines: recorded.lines,
    truncated: shaped.truncated,
    metadata: Object.keys(input.metadata).length === 0 ? own : { ...own, ...input.metadata },
    ...(error === undefined ? {} : { error: { tag: error._tag, message: error.message } }),
    attempts: input.attempts,
    durationMs: input.durationMs
  }
}
