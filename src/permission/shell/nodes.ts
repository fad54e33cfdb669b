/** The grammar's node types, as the analysis groups them. */

/** Statement nodes whose named children are statements again. */
export const CONTAINERS = new Set([
  "program",
  "list",
  "pipeline",
  "subshell",
  "compound_statement",
  "redirected_statement",
  "negated_command"
])
/** Node types a word may be. */
export const WORDS = new Set([
  "word",
  "number",
  "raw_string",
  "ansi_c_string",
  "string",
  "concatenation",
  "brace_expression"
])
export const SUBSTITUTIONS = new Set(["command_substitution", "process_substitution"])
