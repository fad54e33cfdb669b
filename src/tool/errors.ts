/**
 * Every way a tool call can fail, as typed errors. None of them ever escapes the orchestrator
 * as a defect: each becomes a ToolResult with a status and a message the model can act on.
 */
import { Schema } from "effect"

/** The model named a tool that is not registered. */
export class UnknownTool extends Schema.TaggedError<UnknownTool>()("UnknownTool", {
  name: Schema.String,
  suggestions: Schema.Array(Schema.String),
  message: Schema.String
}) {}

/** One failing path of a decoded argument object. */
export const ArgumentIssue = Schema.Struct({
  path: Schema.String,
  message: Schema.String
})
export type ArgumentIssue = typeof ArgumentIssue.Type

/** The arguments did not match the tool's schema, or the tool's own validateInput refused them. */
export class InvalidArguments extends Schema.TaggedError<InvalidArguments>()("InvalidArguments", {
  tool: Schema.String,
  issues: Schema.Array(ArgumentIssue),
  message: Schema.String
}) {}

/** A permission check (the tool's own, or the engine's) refused the call. */
export class PermissionDenied extends Schema.TaggedError<PermissionDenied>()("PermissionDenied", {
  tool: Schema.String,
  message: Schema.String
}) {}

/** The call ran past its time limit; whatever it printed so far travels with it. */
export class ToolTimeout extends Schema.TaggedError<ToolTimeout>()("ToolTimeout", {
  tool: Schema.String,
  timeoutMs: Schema.Number,
  partialOutput: Schema.String,
  message: Schema.String
}) {}

/** The person cancelled the call; whatever it printed so far travels with it. */
export class ToolInterrupted extends Schema.TaggedError<ToolInterrupted>()("ToolInterrupted", {
  tool: Schema.String,
  partialOutput: Schema.String,
  message: Schema.String
}) {}

/**
 * A failure that may succeed if the call is repeated (a busy file, a dropped connection).
 * Only a tool that declares `retrySafe` is ever rerun after one.
 */
export class TransientFailure extends Schema.TaggedError<TransientFailure>()("TransientFailure", {
  message: Schema.String
}) {}

/**
 * The tool ran and failed; `message` tells the model what to do instead. With `partialOutput`
 * (set, even to ""), what the tool streamed before failing is kept and shown after the message.
 */
export class ToolFailure extends Schema.TaggedError<ToolFailure>()("ToolFailure", {
  message: Schema.String,
  metadata: Schema.optionalKey(Schema.Record(Schema.String, Schema.Unknown)),
  partialOutput: Schema.optionalKey(Schema.String)
}) {}

/** What a tool's execute may fail with. */
export type ExecuteError = ToolFailure | TransientFailure | PermissionDenied | InvalidArguments

/** Everything the orchestrator turns into a non-ok ToolResult. */
export type ToolError =
  | UnknownTool
  | InvalidArguments
  | PermissionDenied
  | ToolTimeout
  | ToolInterrupted
  | TransientFailure
  | ToolFailure

/** A short constructor for the most common failure. */
export const fail = (message: string, metadata?: Record<string, unknown>): ToolFailure =>
  new ToolFailure(metadata === undefined ? { message } : { message, metadata })
