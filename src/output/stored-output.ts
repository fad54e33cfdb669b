/** What the OutputStore (store.ts) keeps and is asked to keep, named apart so its writers (spill.ts, capture.ts) can use them without a cycle. */

export interface StoredOutput {
  readonly sessionId: string
  readonly id: string
  readonly tool: string
  readonly text: string
  readonly chars: number
  readonly lines: number
  readonly bytes: number
  /**
   * Set when the output was larger than a session's memory budget: it lives in this file, which
   * the store owns, and `text` is empty. Read its lines with `spilledLines` (never whole).
   */
  readonly file?: string
  /** For a spilled output, its first and last characters, so shaping never reads the file. */
  readonly head?: string
  readonly tail?: string
  /** For a spilled output cut at the spill limit: bytes that were not written to the file. */
  readonly droppedBytes?: number
}

export interface PutRequest {
  readonly sessionId: string
  readonly id: string
  readonly tool: string
  readonly text: string
  /** `countLines(text)`, when the caller has it already. */
  readonly lines?: number
}

/** Whether a put was kept; a refused put says why, so the model's marker can say so too. */
export type PutResult = { readonly stored: true } | { readonly stored: false; readonly reason: string }
