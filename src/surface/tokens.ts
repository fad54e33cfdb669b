/**
 * Counting tokens the way the schema tax is measured: o200k_base (gpt-tokenizer; OpenAI's
 * GPT-4o/4.1/5 encoding) of a declaration's compact JSON.
 */
import { createRequire } from "node:module"

type Encode = (text: string) => Array<number>

let encoder: Encode | undefined

/**
 * o200k_base tokens of a text. The encoding's table costs tens of MB resident, so it is loaded
 * on the first count, not when this module is imported (most processes never count). `require`
 * keeps the API synchronous: it loads gpt-tokenizer's CommonJS build.
 */
export const encodeO200k = (text: string): Array<number> => {
  encoder ??= (
    createRequire(import.meta.url)(
      "gpt-tokenizer/encoding/o200k_base"
    ) as typeof import("gpt-tokenizer/encoding/o200k_base")
  ).encode
  return encoder(text)
}

export const countTokens = (declaration: unknown): number => encodeO200k(JSON.stringify(declaration) ?? "").length
