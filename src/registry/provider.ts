/**
 * The `tools` request parameter in each provider's own shape, each schema compiled for the
 * provider's dialect (src/schema/dialects/). The order is the registry's stable order, and for
 * Anthropic the last tool carries the prompt-cache breakpoint, so the tools block stays inside
 * the cached prefix.
 */
import { compileAnthropic, compileGemini, compileOpenAIStrict, type DialectChange } from "../schema/dialects/index.ts"
import { compileTopObject } from "../schema/dialects/top-level.ts"
import type { JsonSchema } from "../schema/json-schema.ts"

export type Provider = "anthropic" | "openai" | "openai-strict" | "openai-responses" | "gemini"
export const providers: ReadonlyArray<Provider> = ["anthropic", "openai", "openai-strict", "openai-responses", "gemini"]

export interface ToolDefinition {
  readonly name: string
  readonly description: string
  readonly inputSchema: JsonSchema
}

const schemaOf = (t: ToolDefinition) => t.inputSchema as Record<string, unknown>

/** One tool's schema for a provider, and what the dialect changed. */
export const compileFor = (
  provider: Provider,
  tool: ToolDefinition
): {
  readonly schema: Record<string, unknown>
  readonly changes: ReadonlyArray<DialectChange>
  readonly strict?: boolean
} => {
  switch (provider) {
    case "anthropic":
      return compileAnthropic(schemaOf(tool))
    case "openai":
    case "openai-responses":
      return compileTopObject(schemaOf(tool))
    case "openai-strict": {
      const strict = compileOpenAIStrict(schemaOf(tool))
      // An open map cannot be strict: the tool goes out non-strict with its own (top-level-fixed) schema.
      return strict.strict ? strict : { ...compileTopObject(schemaOf(tool)), changes: strict.changes, strict: false }
    }
    case "gemini":
      return compileGemini(schemaOf(tool))
  }
}

/** What each provider's dialect changed, per tool (tools with no change left out). */
export const dialectReport = (
  provider: Provider,
  tools: ReadonlyArray<ToolDefinition>
): ReadonlyArray<{ readonly tool: string; readonly changes: ReadonlyArray<DialectChange> }> =>
  tools.flatMap((t) => {
    const { changes } = compileFor(provider, t)
    return changes.length === 0 ? [] : [{ tool: t.name, changes }]
  })

export const toolsParam = (provider: Provider, tools: ReadonlyArray<ToolDefinition>): Array<unknown> => {
  switch (provider) {
    case "anthropic":
      return tools.map((t, i) => ({
        name: t.name,
        description: t.description,
        input_schema: compileFor(provider, t).schema,
        ...(i === tools.length - 1 ? { cache_control: { type: "ephemeral" } } : {})
      }))
    case "openai":
      return tools.map((t) => ({
        type: "function",
        function: { name: t.name, description: t.description, parameters: compileFor(provider, t).schema }
      }))
    case "openai-strict":
      return tools.map((t) => {
        const compiled = compileFor(provider, t)
        return {
          type: "function",
          function: {
            name: t.name,
            description: t.description,
            parameters: compiled.schema,
            strict: compiled.strict ?? false
          }
        }
      })
    case "openai-responses":
      return tools.map((t) => ({
        type: "function",
        name: t.name,
        description: t.description,
        parameters: compileFor(provider, t).schema
      }))
    case "gemini":
      return tools.length === 0
        ? []
        : [
            {
              functionDeclarations: tools.map((t) => ({
                name: t.name,
                description: t.description,
                parameters: compileFor(provider, t).schema
              }))
            }
          ]
  }
}
