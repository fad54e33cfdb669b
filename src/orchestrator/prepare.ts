/**
 * prepare: a model's call → a typed invocation, exactly once. The name is resolved (exact id,
 * else a wrong-case name repaired, else UnknownTool with the closest names), the arguments
 * parsed (a JSON string is accepted), bounded in depth, coerced (quoted scalars) and decoded by
 * the tool's own schema. A tool that forwards (tool_call) names the call to prepare instead.
 * Everything after this works on decoded arguments and never parses or decodes again.
 */
import { Effect, Result } from "effect"
import { unknownTool } from "../registry/suggest.ts"
import { coerceArgs } from "../schema/coerce.ts"
import { exceedsDepth, MAX_ARGUMENT_DEPTH } from "../schema/depth.ts"
import { dropStrictNulls } from "../schema/dialects/openai-strict.ts"
import { isRecord } from "../schema/json-schema.ts"
import { InvalidArguments, type ToolFailure, type UnknownTool } from "../tool/errors.ts"
import type { ToolCall } from "../tool/result.ts"
import type { Tool, ToolContext } from "../tool/tool.ts"
import { defectFailure } from "./defect.ts"

/** A name a catalog knows but does not let this caller reach (a surface's `shell`). */
export interface Unreachable {
  readonly _tag: "Unreachable"
  readonly error: ToolFailure
  readonly tool: string
  readonly metadata: Readonly<Record<string, unknown>>
}

/** Where names resolve: the registry, or a surface's view of it (which adds tool_search and tool_call). */
export interface Catalog {
  /** Exact id, else a wrong-case name repaired; undefined when no tool has the name. */
  readonly find: (name: string, sessionId: string) => Tool | Unreachable | undefined
  /** Every name, for "did you mean". */
  readonly names: () => ReadonlyArray<string>
  /** A strict-mode model sends null for an optional argument it leaves out: it means absent. */
  readonly strictNulls: boolean
}

/** A call resolved and decoded: the one typed form the rest of the path works on. */
export interface Invocation {
  readonly call: ToolCall
  readonly tool: Tool
  /** The arguments as parsed, before coercion: what hooks see and may rewrite. */
  readonly input: Readonly<Record<string, unknown>>
  /** The decoded arguments the tool runs with. */
  readonly args: unknown
  /** The argument paths that were coerced (quoted numbers, booleans). */
  readonly coerced: ReadonlyArray<string>
  /** The forwarding tool the call came through (tool_call), if any. */
  readonly via?: string
  /** What the call touches, as the tool declares it: asked once, here. */
  readonly paths: ReadonlyArray<string>
  /** The kind of output the tool declares for these arguments (for compression). */
  readonly outputKind: string | undefined
  /** The context the declarations were asked in: the call's session and root, nothing emitted. */
  readonly scope: ToolContext
}

/** Who a call is prepared for: its session, the project root its paths resolve against. */
export interface Asker {
  readonly sessionId: string
  readonly root: string
  readonly canSeeImages?: boolean
}

const NO_EMIT = () => Effect.void

/** A call that never became an invocation, and why. */
export interface NotPrepared {
  readonly call: ToolCall
  /** The tool's id when the name resolved, else the name as sent. */
  readonly tool: string
  readonly error: UnknownTool | InvalidArguments | ToolFailure
  readonly metadata: Readonly<Record<string, unknown>>
}

const invalid = (tool: string, message: string) =>
  new InvalidArguments({
    tool,
    issues: [{ path: "(arguments)", message }],
    message: `Invalid arguments for ${tool}: ${message}`
  })

/** The arguments as an object: a JSON string is parsed, nothing at all is `{}`. */
export const parseArgs = (tool: string, raw: unknown): Result.Result<Record<string, unknown>, InvalidArguments> => {
  let args = raw ?? {}
  if (typeof args === "string") {
    try {
      args = args.trim() === "" ? {} : JSON.parse(args)
    } catch (e) {
      return Result.fail(invalid(tool, `arguments are not valid JSON (${(e as Error).message}); send a JSON object`))
    }
  }
  if (!isRecord(args)) return Result.fail(invalid(tool, `arguments must be a JSON object, got ${preview(args)}`))
  return exceedsDepth(args, MAX_ARGUMENT_DEPTH)
    ? Result.fail(
        invalid(tool, `arguments nest deeper than ${MAX_ARGUMENT_DEPTH} levels; send them flatter (or as a string)`)
      )
    : Result.succeed(args)
}

const preview = (value: unknown): string => {
  try {
    const json = JSON.stringify(value) ?? String(value)
    return json.length > 80 ? `${json.slice(0, 77)}...` : json
  } catch {
    return typeof value
  }
}

/** Whether a null is anywhere in the arguments (most calls have none: nothing to drop). Iterative. */
const hasNull = (value: unknown): boolean => {
  const stack: Array<unknown> = [value]
  while (stack.length > 0) {
    const v = stack.pop()
    if (v === null) return true
    if (typeof v === "object") for (const child of Object.values(v as object)) stack.push(child)
  }
  return false
}

/**
 * Coerces and decodes parsed arguments against the tool's schema — the one decode of a call —
 * then asks the tool what the call touches and what kind of output it makes. One policy for a
 * declaration that throws: the call does not run (a ToolFailure naming the bug), so the
 * permission check, tool_start and compression never see a guess.
 */
export const decodeInput = (
  call: ToolCall,
  tool: Tool,
  input: Readonly<Record<string, unknown>>,
  asker: Asker,
  via?: string
): Result.Result<Invocation, InvalidArguments | ToolFailure> => {
  const repaired = coerceArgs(tool.inputSchema, input)
  const decoded = tool.decode(repaired.value)
  if (Result.isFailure(decoded)) return Result.fail(decoded.failure)
  const args = decoded.success
  const scope: ToolContext = {
    sessionId: asker.sessionId,
    callId: call.id,
    root: asker.root,
    canSeeImages: asker.canSeeImages ?? false,
    emit: NO_EMIT
  }
  let paths: ReadonlyArray<string>
  let outputKind: string | undefined
  try {
    paths = tool.paths(args, scope)
    outputKind = tool.outputKind?.(args)
  } catch (defect) {
    return Result.fail(defectFailure(tool.id, defect))
  }
  return Result.succeed({
    call,
    tool,
    input,
    args,
    coerced: repaired.paths,
    ...(via === undefined ? {} : { via }),
    paths,
    outputKind,
    scope
  })
}

const notPrepared = (
  call: ToolCall,
  tool: string,
  error: NotPrepared["error"],
  metadata: Readonly<Record<string, unknown>> = {}
): Result.Result<never, NotPrepared> => Result.fail({ call, tool, error, metadata })

const prepareAs = (
  catalog: Catalog,
  call: ToolCall,
  asker: Asker,
  strictNulls: boolean,
  via: string | undefined
): Result.Result<Invocation, NotPrepared> => {
  const found = catalog.find(call.name, asker.sessionId)
  if (found === undefined) return notPrepared(call, call.name, unknownTool(call.name, catalog.names()))
  if ("_tag" in found) return notPrepared(call, found.tool, found.error, found.metadata)
  const tool = found
  const parsed = parseArgs(tool.id, call.args)
  if (Result.isFailure(parsed)) return notPrepared(call, tool.id, parsed.failure)
  const input =
    strictNulls && hasNull(parsed.success) ? dropStrictNulls(tool.inputSchema, parsed.success) : parsed.success
  const decoded = decodeInput(call, tool, input as Record<string, unknown>, asker, via)
  if (Result.isFailure(decoded)) return notPrepared(call, tool.id, decoded.failure)
  const forward = tool.forwards
  if (forward === undefined) return Result.succeed(decoded.success)
  if (via !== undefined) return notPrepared(call, tool.id, invalid(tool.id, `${tool.id} cannot run through ${via}`))
  const inner = forward(decoded.success.args)
  if (Result.isFailure(inner)) return notPrepared(call, tool.id, inner.failure)
  // The inner arguments come from a model too, always under the same strict-null reading.
  const forwarded = { id: call.id, name: inner.success.name, args: inner.success.args }
  return Result.mapError(prepareAs(catalog, forwarded, asker, true, tool.id), (np) => ({
    ...np,
    metadata: { ...np.metadata, via: tool.id }
  }))
}

/** The call as an invocation, or why it is none. */
export const prepare = (catalog: Catalog, call: ToolCall, asker: Asker): Result.Result<Invocation, NotPrepared> =>
  prepareAs(catalog, call, asker, catalog.strictNulls, undefined)

export { MAX_ARGUMENT_DEPTH } from "../schema/depth.ts"
