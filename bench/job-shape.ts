/**
 * What the background-job surface costs the prompt, in the shape shipped (a `run_in_background`
 * flag on bash and a `job` tool) and in the alternative of folding the job actions into
 * `output`'s parameters (built here only, for the measurement). Tokens are o200k_base tokens of
 * the declaration's compact JSON, as `freecode-tools tools` counts them, and of each provider's
 * entry for the worst case (openai-strict, which lists every property as required-or-null).
 *   node bench/job-shape.ts
 */
import { Effect, Schema } from "effect"
import { countTokens } from "../src/cli/estimate.ts"
import { type Provider, type ToolDefinition, toolsParam } from "../src/registry/provider.ts"
import { definitionOf } from "../src/surface/surface.ts"
import { defineTool, type Tool } from "../src/tool/tool.ts"
import { BashTool } from "../src/tools/bash.ts"
import { JobTool } from "../src/tools/job.ts"
import { OutputTool } from "../src/tools/output.ts"

/** bash as it was before background jobs: the same declaration without `run_in_background`. */
const bashWithout = (): Tool => {
  const { run_in_background: _, ...properties } = BashTool.inputSchema.properties ?? {}
  return { ...BashTool, inputSchema: { ...BashTool.inputSchema, properties } } as Tool
}

/** bash whose `run_in_background` points to `output` instead of `job`. */
const bashToOutput = (): Tool => {
  const properties = { ...BashTool.inputSchema.properties }
  properties.run_in_background = {
    type: "boolean",
    description: "Return at once with a job id (a server, a watcher, a long build); follow it with the output tool."
  }
  return { ...BashTool, inputSchema: { ...BashTool.inputSchema, properties } } as Tool
}

/** `output` taking a job's id too, with the job's actions as optional parameters. */
const foldedOutput = defineTool({
  id: "output",
  description:
    "Read the part of an earlier tool result that was cut from your copy: the id from the omitted-lines marker and either a line window (offset, limit) or a regex pattern. With the id of a background job (bash run_in_background): its new output and state; input writes to its stdin, eof closes it, stop ends it. No id: list the jobs.",
  parameters: Schema.Struct({
    id: Schema.optionalKey(
      Schema.String.annotate({
        description: "The id named in an omitted-lines marker, or a job id bash returned; omit to list jobs."
      })
    ),
    offset: Schema.optionalKey(
      Schema.Int.check(Schema.isGreaterThan(0)).annotate({ description: "First line to show, 1-based." })
    ),
    limit: Schema.optionalKey(
      Schema.Int.check(Schema.isGreaterThan(0)).annotate({ description: "Lines to show (default 200)." })
    ),
    pattern: Schema.optionalKey(
      Schema.String.annotate({
        description:
          "A regex (RE2 syntax, as ripgrep): show only matching lines (with a line of context), instead of a window."
      })
    ),
    input: Schema.optionalKey(Schema.String.annotate({ description: "A job only: text for its stdin (add \\n)." })),
    eof: Schema.optionalKey(Schema.Boolean.annotate({ description: "A job only: close its stdin." })),
    stop: Schema.optionalKey(Schema.Boolean.annotate({ description: "A job only: stop it and everything it started." }))
  }),
  execute: () => Effect.succeed({ title: "", output: "" })
})

const size = (tools: ReadonlyArray<ToolDefinition>, provider?: Provider) =>
  tools.reduce((sum, t) => sum + countTokens(provider === undefined ? t : toolsParam(provider, [t])[0]), 0)

const defs = (...tools: ReadonlyArray<Tool<never>>) => tools.map(definitionOf)
const output = OutputTool as unknown as Tool<never>

const shapes: ReadonlyArray<readonly [string, ReadonlyArray<ToolDefinition>]> = [
  ["before jobs: bash (no run_in_background) + output", defs(bashWithout(), output)],
  ["shipped: bash + output + job", defs(BashTool, output, JobTool)],
  ["folded: bash + output taking job ids and actions", defs(bashToOutput(), foldedOutput)]
]

const [before] = shapes
console.log("| shape | tokens | added | openai-strict | added |")
console.log("| --- | --- | --- | --- | --- |")
for (const [name, tools] of shapes) {
  const plain = size(tools)
  const strict = size(tools, "openai-strict")
  const base = [size(before![1]), size(before![1], "openai-strict")] as const
  console.log(`| ${name} | ${plain} | ${plain - base[0]} | ${strict} | ${strict - base[1]} |`)
}
