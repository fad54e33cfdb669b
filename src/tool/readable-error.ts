/**
 * An error as a person or a model should read it. Effect's platform errors print as
 * `NotFound: FileSystem.readFile (/x)` and schema errors as `SchemaError(Expected string …)`:
 * the library's module and method names mean nothing to either reader. Every place an error
 * becomes text (tool failures, the CLI's messages, a tool's defect) goes through here.
 */

const REASONS: Readonly<Record<string, string>> = {
  AlreadyExists: "it already exists",
  BadResource: "it is not a usable file or resource",
  Busy: "it is busy",
  InvalidData: "its data is invalid",
  NotFound: "no such file or directory",
  PermissionDenied: "permission denied",
  TimedOut: "the operation timed out",
  UnexpectedEof: "it ended unexpectedly",
  WouldBlock: "the operation would block",
  WriteZero: "nothing could be written"
}

interface SystemReason {
  readonly _tag: string
  readonly pathOrDescriptor?: unknown
  readonly description?: unknown
}

const isObject = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null

const systemText = (reason: SystemReason): string => {
  const what = REASONS[reason._tag] ?? "the operation failed"
  const where = typeof reason.pathOrDescriptor === "string" ? `${reason.pathOrDescriptor}: ` : ""
  const detail = typeof reason.description === "string" && reason.description !== "" ? ` (${reason.description})` : ""
  return `${where}${what}${detail}`
}

export const readableError = (error: unknown): string => {
  if (isObject(error) && error._tag === "PlatformError" && isObject(error.reason)) {
    const reason = error.reason as unknown as SystemReason
    if (reason._tag === "BadArgument") {
      return typeof reason.description === "string" ? reason.description : "a bad argument"
    }
    return systemText(reason)
  }
  // A schema failure's message is its issues ("Expected string\n  at [\"a\"]"); its String() wraps them.
  if (isObject(error) && error._tag === "SchemaError" && typeof error.message === "string") {
    return error.message.replace(/\s*\n\s*/g, " ")
  }
  if (error instanceof Error) return error.message
  if (isObject(error) && typeof error.message === "string") return error.message
  return String(error)
}
