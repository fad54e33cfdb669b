/**
 * The `run` protocol: one JSON array of calls per input line (one model turn), one ToolResult
 * JSON object per output line. A line that does not fit becomes one error line, never a crash.
 */
import { Result } from "effect"
import type { ToolCall } from "../tool/result.ts"

export const EXPECTED_SHAPE =
  'Each line must be one JSON array of calls, [{"id":"<call id>","name":"<tool>","args":{...}}, ...]: id and name are strings, args is a JSON object (or a JSON string of one).'

/** The line written for an input line that is not a turn. */
export interface MalformedLine {
  readonly line: number
  readonly status: "error"
  readonly modelOutput: string
}

const kind = (value: unknown): string =>
  value === null
    ? "null"
    : Array.isArray(value)
      ? "an array"
      : typeof value === "object"
        ? "an object"
        : `a ${typeof value}`

/** Reads one input line as a turn: the calls, or what is wrong with the line. */
export const parseTurn = (text: string): Result.Result<ReadonlyArray<ToolCall>, string> => {
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch (e) {
    return Result.fail(`not valid JSON (${(e as Error).message}). ${EXPECTED_SHAPE}`)
  }
  if (!Array.isArray(value)) return Result.fail(`expected a JSON array of calls, got ${kind(value)}. ${EXPECTED_SHAPE}`)
  const calls: Array<ToolCall> = []
  for (const [i, call] of value.entries()) {
    const at = `call ${i + 1}`
    if (typeof call !== "object" || call === null || Array.isArray(call)) {
      return Result.fail(`${at} is ${kind(call)}, not a call object. ${EXPECTED_SHAPE}`)
    }
    const { id, name, args } = call as { readonly id?: unknown; readonly name?: unknown; readonly args?: unknown }
    if (typeof id !== "string" || id.length === 0) return Result.fail(`${at} has no string "id". ${EXPECTED_SHAPE}`)
    if (typeof name !== "string" || name.length === 0)
      return Result.fail(`${at} (id ${JSON.stringify(id)}) has no string "name". ${EXPECTED_SHAPE}`)
    calls.push({ id, name, args })
  }
  return Result.succeed(calls)
}

export const malformedLine = (line: number, problem: string): MalformedLine => ({
  line,
  status: "error",
  modelOutput: `line ${line}: ${problem}`
})
