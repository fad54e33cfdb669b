/** The small slice of JSON Schema this library reads. Unknown keys are kept as they are. */
export interface JsonSchema {
  readonly type?: string | ReadonlyArray<string>
  readonly properties?: Readonly<Record<string, JsonSchema>>
  readonly items?: JsonSchema | ReadonlyArray<JsonSchema>
  readonly required?: ReadonlyArray<string>
  readonly description?: string
  readonly enum?: ReadonlyArray<unknown>
  readonly additionalProperties?: boolean | JsonSchema
  readonly [key: string]: unknown
}

/** A tool's parameter schema: always an object at the top, as every provider requires. */
export interface ObjectJsonSchema extends JsonSchema {
  readonly type: "object"
  readonly properties: Readonly<Record<string, JsonSchema>>
}

export const isRecord = (u: unknown): u is Record<string, unknown> =>
  typeof u === "object" && u !== null && !Array.isArray(u)
