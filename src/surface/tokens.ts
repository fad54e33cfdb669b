/**
 * Counting tokens the way the schema tax is measured: o200k_base (gpt-tokenizer; OpenAI's
 * GPT-4o/4.1/5 encoding) of a declaration's compact JSON.
 */
import { encode } from "gpt-tokenizer/encoding/o200k_base"

export const countTokens = (declaration: unknown): number => encode(JSON.stringify(declaration) ?? "").length
