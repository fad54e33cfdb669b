/**
 * convertMcpTool: a server's tool as a `Tool`, so nothing downstream knows the difference.
 *  - name `mcp__<server>__<tool>` (names.ts); the server's own name is kept for the call;
 *  - only an explicit `readOnlyHint: true` makes a tool read-only: an absent annotation says
 *    nothing, and guessing "harmless" is how a create_issue call gets silently retried;
 *  - read-only tools may share a batch; a rerun is safe only when read-only AND idempotent;
 *  - an untrusted server's annotations count for nothing;
 *  - the schema goes through the real resolver for the model, and the server's own schema
 *    validates the arguments (ajv) before anything is sent.
 */
import { type Duration, type Effect, Result } from "effect"
import { resolveSchema, SchemaProblem } from "../schema/resolve.ts"
import { clip } from "../text/cut.ts"
import type { ExecuteError } from "../tool/errors.ts"
import type { Tool, ToolContext, ToolOutput } from "../tool/tool.ts"
import type { McpToolInfo } from "./list.ts"
import { mcpToolName } from "./names.ts"
import type { ParamHeader } from "./param-headers.ts"
import { compileValidator } from "./validate.ts"

/** Longer descriptions are cut: they are sent on every request. */
export const MAX_DESCRIPTION_CHARS = 2048

export interface McpServerRef {
  readonly name: string
  /** false: annotations count for nothing. */
  readonly trusted: boolean
  /** The ceiling on one call, progress included (the per-call idle timeout is the client's). */
  readonly maxCallDuration: Duration.Input
}

/** Sends one call to the server under the server's own tool name. */
export type McpCaller = (
  tool: string,
  args: unknown,
  ctx: ToolContext,
  paramHeaders?: ReadonlyArray<ParamHeader>
) => Effect.Effect<ToolOutput, ExecuteError>

export interface Converted {
  readonly tool: Tool
  /** Lossy steps the resolver took, for a warning. */
  readonly notes: ReadonlyArray<string>
}

const describe = (server: string, info: McpToolInfo): string => {
  const text = (info.description ?? info.title ?? info.annotations.title ?? "").trim()
  const full = text === "" ? `The ${info.name} tool of the ${server} MCP server.` : text
  return clip(full, MAX_DESCRIPTION_CHARS)
}

/** Converts one tool; an Err names why it cannot be offered (its schema is unusable). */
export const convertMcpTool = (
  server: McpServerRef,
  info: McpToolInfo,
  call: McpCaller,
  id: string = mcpToolName(server.name, info.name)
): Result.Result<Converted, string> => {
  let resolved: ReturnType<typeof resolveSchema>
  let decode: Tool["decode"]
  try {
    resolved = resolveSchema(info.inputSchema)
    decode = compileValidator(id, info.inputSchema, resolved.dialect)
  } catch (e) {
    const reason = e instanceof SchemaProblem ? e.message : `its schema does not compile: ${(e as Error).message}`
    return Result.fail(reason)
  }
  const hints = server.trusted ? info.annotations : {}
  const readOnly = hints.readOnlyHint === true
  const tool: Tool = {
    id,
    description: describe(server.name, info),
    source: "mcp",
    inputSchema: resolved.schema,
    decode,
    concurrencySafe: readOnly,
    mutates: !readOnly,
    retrySafe: readOnly && hints.idempotentHint === true,
    // A remote read may be abandoned midway; a remote write is left to finish.
    interruptBehavior: readOnly ? "cancel" : "block",
    timeout: () => server.maxCallDuration,
    maxResultSizeChars: undefined,
    truncate: "both",
    operations: ["mcp.call"],
    requiresApproval: false,
    paths: () => [],
    validateInput: undefined,
    checkPermissions: undefined,
    execute: (args, ctx) => call(info.name, args, ctx, info.paramHeaders)
  }
  return Result.succeed({ tool, notes: resolved.notes })
}
