/**
 * The `tools` request parameter in each provider's own shape. The order is the registry's
 * stable order, and for Anthropic the last tool carries the prompt-cache breakpoint, so the
 * tools block stays inside the cached prefix.
 */
import { isRecord, type JsonSchema } from "../schema/json-schema.ts"
import { lowerOneOf } from "../schema/resolve.ts"

export type Provider = "anthropic" | "openai" | "openai-responses" | "gemini"
export const providers: ReadonlyArray<Provider> = ["anthropic", "openai", "openai-responses", "gemini"]

export interface ToolDefinition {
  readonly name: string
  readonly description: string
  readonly inputSchema: JsonSchema
}

// Keywords Gemini's OpenAPI-subset `parameters` rejects.
const GEMINI_DROP = new Set([
  "$schema",
  "$defs",
  "$id",
  "additionalProperties",
  "exclusiveMinimum",
  "exclusiveMaximum",
  "const"
])

const forGemini = (schema: unknown): unknown => {
  if (Array.isArray(schema)) return schema.map(forGemini)
  if (!isRecord(schema)) return schema
  const out: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(schema)) {
    if (GEMINI_DROP.has(key)) continue
    // Property names are data, not keywords: recurse into each value but keep every name.
    out[key] =
      key === "properties" && isRecord(value)
        ? Object.fromEntries(Object.entries(value).map(([k, v]) => [k, forGemini(v)]))
        : forGemini(value)
  }
  return out
}

export const toolsParam = (provider: Provider, tools: ReadonlyArray<ToolDefinition>): Array<unknown> => {
  switch (provider) {
    case "anthropic":
      return tools.map((t, i) => ({
        name: t.name,
        description: t.description,
        input_schema: t.inputSchema,
        ...(i === tools.length - 1 ? { cache_control: { type: "ephemeral" } } : {})
      }))
    case "openai":
      return tools.map((t) => ({
        type: "function",
        function: { name: t.name, description: t.description, parameters: t.inputSchema }
      }))
    case "openai-responses":
      return tools.map((t) => ({
        type: "function",
        name: t.name,
        description: t.description,
        parameters: t.inputSchema
      }))
    case "gemini":
      return tools.length === 0
        ? []
        : [
            {
              functionDeclarations: tools.map((t) => ({
                name: t.name,
                description: t.description,
                parameters: forGemini(lowerOneOf(t.inputSchema))
              }))
            }
          ]
  }
}
