/** What a model asks for, and what it gets back. */
export interface ToolCall {
  /** The provider's call id; also the key of the stored full output. */
  readonly id: string
  readonly name: string
  /** The model's arguments: an object, or a JSON string of one (some providers send strings). */
  readonly args: unknown
}

export type ToolStatus = "ok" | "error" | "denied" | "timeout" | "interrupted"

/**
 * Three views of one output. Only `modelOutput` belongs in the conversation history;
 * `uiOutput` is for people; the whole output stays in the OutputStore under `outputId`.
 */
export interface ToolResult {
  readonly id: string
  readonly tool: string
  readonly status: ToolStatus
  readonly title: string
  /** What the model reads: inside the tool's budget, with a marker naming what was cut. */
  readonly modelOutput: string
  /** What a UI shows: the tail, capped (FREECODE_OUTPUT_UI_MAX_CHARS). */
  readonly uiOutput: string
  /** The key of the full output in the OutputStore (the call id), when it was stored. */
  readonly outputId?: string
  /** Size of the full output. */
  readonly outputChars: number
  readonly outputLines: number
  /** True when the model's copy is shorter than the full output. */
  readonly truncated: boolean
  readonly metadata: Readonly<Record<string, unknown>>
  /** Present when status is not "ok". */
  readonly error?: { readonly tag: string; readonly message: string }
  readonly attempts: number
  readonly durationMs: number
}
