/** The provider dialect compilers: one tool input schema in, the provider's schema and what changed out. */
export { compileAnthropic } from "./anthropic.ts"
export { compileGemini } from "./gemini.ts"
export { type CompiledStrict, compileOpenAIStrict, dropStrictNulls } from "./openai-strict.ts"
export type { Compiled, DialectChange } from "./report.ts"
