/**
 * The limits a program runs under. Each one ends a program with a typed result instead of
 * letting it take the host down: the interpreter is WebAssembly, so memory and stack are the
 * runtime's own, and a loop is stopped by the interrupt handler.
 */

export interface CodeLimits {
  /** Wall time from start to the program's last statement, nested calls included (ms). */
  readonly wallMs: number
  /** The interpreter's heap (bytes). */
  readonly memoryBytes: number
  /** The interpreter's stack (bytes): deep recursion ends as a stack overflow, not a crash. */
  readonly stackBytes: number
  /** Nested tool calls one program may make; later calls are refused. */
  readonly maxCalls: number
  /** Characters the program may print (console.log, text) and return. */
  readonly outputChars: number
  /** Characters of one nested result's output handed to the program (the rest: tools.output). */
  readonly resultChars: number
}

export const DEFAULT_LIMITS: CodeLimits = {
  wallMs: 120_000,
  memoryBytes: 64 * 1024 * 1024,
  stackBytes: 64 * 1024,
  maxCalls: 1_000,
  outputChars: 1_000_000,
  resultChars: 1_000_000
}

/** Environment variables that set each limit (a whole number; anything else is ignored). */
export const LIMIT_VARIABLES: Readonly<Record<keyof CodeLimits, string>> = {
  wallMs: "FREECODE_CODE_WALL_MS",
  memoryBytes: "FREECODE_CODE_MEMORY_BYTES",
  stackBytes: "FREECODE_CODE_STACK_BYTES",
  maxCalls: "FREECODE_CODE_MAX_CALLS",
  outputChars: "FREECODE_CODE_OUTPUT_CHARS",
  resultChars: "FREECODE_CODE_RESULT_CHARS"
}

/** The defaults, then `given`, then the environment's variables (each a positive whole number). */
export const resolveLimits = (
  given: Partial<CodeLimits> = {},
  env: Readonly<Record<string, string | undefined>> = {}
): CodeLimits => {
  const out: Record<string, number> = { ...DEFAULT_LIMITS, ...given }
  for (const [key, name] of Object.entries(LIMIT_VARIABLES)) {
    const raw = env[name]
    if (raw !== undefined && /^[1-9][0-9]*$/.test(raw.trim())) out[key] = Number(raw.trim())
  }
  return out as unknown as CodeLimits
}
