/**
 * How a talk with a language server fails, as typed values: the server's process is gone, it did
 * not answer in time, or it broke the protocol (an error answer, or bytes that are not JSON-RPC).
 * Each message is a sentence the model can act on; the service (service.ts) turns them into tool
 * failures.
 */
import { Schema } from "effect"

/** The server's process ended, or its pipe broke, before it answered `method`. */
export class LspServerExited extends Schema.TaggedError<LspServerExited>()("LspServerExited", {
  server: Schema.String,
  method: Schema.String,
  /** Why, as "it exited (code 3): <the end of its stderr>"; read by the start's report. */
  reason: Schema.String,
  message: Schema.String
}) {}

/** The server did not answer `method` within `timeoutMs`; the request was cancelled. */
export class LspTimeout extends Schema.TaggedError<LspTimeout>()("LspTimeout", {
  server: Schema.String,
  method: Schema.String,
  timeoutMs: Schema.Number,
  message: Schema.String
}) {}

/** The server answered `method` with an error, or sent what is not JSON-RPC. */
export class LspProtocolError extends Schema.TaggedError<LspProtocolError>()("LspProtocolError", {
  server: Schema.String,
  method: Schema.String,
  /** The JSON-RPC error code, when the server sent one. */
  code: Schema.optionalKey(Schema.Number),
  /** What the server said, without the sentence around it. */
  detail: Schema.String,
  message: Schema.String
}) {}

export type LspFailure = LspServerExited | LspTimeout | LspProtocolError

export const serverExited = (server: string, method: string, reason: string) =>
  new LspServerExited({
    server,
    method,
    reason,
    message: `The ${server} language server stopped during ${method}: ${reason}. The next call starts it again.`
  })

export const timedOut = (server: string, method: string, timeoutMs: number) =>
  new LspTimeout({
    server,
    method,
    timeoutMs,
    message: `The ${server} server did not answer ${method} in ${timeoutMs / 1000} s; try again.`
  })

export const protocolError = (server: string, method: string, detail: string, code?: number) =>
  new LspProtocolError({
    server,
    method,
    ...(code === undefined ? {} : { code }),
    detail,
    message: `The ${server} server failed ${method}: ${detail}. Use grep and read instead, or try again.`
  })
