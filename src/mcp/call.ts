/**
 * `tools/call` on one connection, as a tool's `execute`: the answer flattened (result.ts), a
 * server's `isError` an error result, an answer that is not a result a typed error saying the
 * call's effect is unknown. A `resource_link` in the answer names the call that reads it, when
 * the server serves resources. A question the server asks during the call goes to the call's
 * person, and a login it asks for is offered to them (asking.ts).
 */
import { Effect } from "effect"
import { fail, type ToolFailure } from "../tool/errors.ts"
import type { ToolContext, ToolOutput } from "../tool/tool.ts"
import { askingRequest } from "./asking.ts"
import type { McpCaller } from "./convert.ts"
import type { McpLink } from "./link.ts"
import { type ParamHeader, paramHeaders } from "./param-headers.ts"
import type { Person } from "./questions.ts"
import { READ_RESOURCE_TOOL } from "./resource-names.ts"
import { flattenResult, resultProblem } from "./result.ts"

/** The line that tells the model how to follow the links of an answer. */
const followLinks = (link: McpLink, links: unknown): string | undefined => {
  if (!link.resources || !Array.isArray(links) || links.length === 0) return undefined
  const first = (links[0] as { uri?: unknown }).uri
  const example = JSON.stringify({ server: link.server, uri: typeof first === "string" ? first : "…" })
  return `(read a linked resource with ${READ_RESOURCE_TOOL} ${example})`
}

/** The answer as the model reads it. */
const outputOf = (link: McpLink, tool: string, raw: unknown): Effect.Effect<ToolOutput, ToolFailure> => {
  const problem = resultProblem(raw)
  if (problem !== undefined) {
    return Effect.fail(
      fail(
        `The ${link.server} MCP server answered ${tool} with something that is not a tool result (${problem}); the call's effect is unknown. Check its effect another way before calling again.`
      )
    )
  }
  const flat = flattenResult(raw)
  if (flat.isError) {
    return Effect.fail(
      fail(flat.output === "" ? `${tool} failed and the server gave no reason.` : flat.output, flat.metadata)
    )
  }
  const follow = followLinks(link, flat.metadata.resourceLinks)
  return Effect.succeed({
    title: `${link.server}: ${tool}`,
    output: follow === undefined ? flat.output : `${flat.output}\n${follow}`,
    metadata: { ...flat.metadata, mcpServer: link.server }
  })
}

export const makeCaller =
  (link: McpLink, person?: Person): McpCaller =>
  (tool, args, ctx?: ToolContext, declared?: ReadonlyArray<ParamHeader>) =>
    Effect.gen(function* () {
      const raw = yield* askingRequest(
        link,
        person,
        "tools/call",
        { name: tool, arguments: args as Record<string, unknown> },
        tool,
        ctx?.sessionId,
        // A 2026-07-28 server over HTTP checks these against the arguments (param-headers.ts).
        declared === undefined || link.era !== "2026-07-28" ? undefined : paramHeaders(declared, args)
      )
      return yield* outputOf(link, tool, raw)
    })
