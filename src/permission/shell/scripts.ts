/**
 * The little languages read-only programs take as an argument: a sed script or an awk program
 * can write files (`w`, `print > f`) or run commands (`e`, `system()`, `|`). Each is accepted
 * only when it is made of parts proven inert here; anything else is not read-only.
 */

/** sed commands that only print, edit the pattern space or branch. */
const SED_PLAIN = new Set([..."pdDnNgGhHxlP=qQz{}"])
const SED_LABEL = new Set([..."btT:"])

/** Reads a delimited part (`/re/`, the parts of `s///`) from `at`; returns the index after the closing delimiter. */
const delimited = (script: string, at: number, delimiter: string): number => {
  let i = at
  while (i < script.length && script[i] !== delimiter) {
    if (script[i] === "\n") return -1
    i += script[i] === "\\" ? 2 : 1
  }
  return i < script.length ? i + 1 : -1
}

/** One sed address (`12`, `$`, `/re/`, `\%re%`, `first~step`); returns the index after it. */
const sedAddress = (script: string, at: number): number => {
  let i = at
  if (script[i] === "/") return delimited(script, i + 1, "/")
  if (script[i] === "\\" && i + 1 < script.length) return delimited(script, i + 2, script[i + 1]!)
  if (script[i] === "$") return i + 1
  while (i < script.length && /[0-9~+]/.test(script[i]!)) i++
  return i
}

/** Whether a sed script only reads its input and prints (no w/W/e/r/R, no `s///w` or `s///e`). */
export const sedScriptIsInert = (script: string): boolean => {
  let i = 0
  const n = script.length
  while (i < n) {
    while (i < n && /[\s;]/.test(script[i]!)) i++
    if (i >= n) return true
    i = sedAddress(script, i)
    if (i < 0) return false
    if (script[i] === ",") i = sedAddress(script, i + 1)
    if (i < 0) return false
    while (i < n && /[ \t!]/.test(script[i]!)) i++
    const command = script[i]
    if (command === undefined) return false
    i++
    if (SED_PLAIN.has(command)) {
      if (command === "q" || command === "Q") while (i < n && /[0-9 ]/.test(script[i]!)) i++
      continue
    }
    if (SED_LABEL.has(command)) {
      while (i < n && script[i] !== ";" && script[i] !== "\n") i++
      continue
    }
    if (command === "s" || command === "y") {
      const delimiter = script[i]
      if (delimiter === undefined || /[\s\\\n]/.test(delimiter)) return false
      i = delimited(script, i + 1, delimiter)
      if (i >= 0) i = delimited(script, i, delimiter)
      if (i < 0) return false
      // Flags: only ones that change matching or printing; w (write) and e (execute) are not.
      if (command === "s") while (i < n && /[gpiImM0-9]/.test(script[i]!)) i++
      if (i < n && !/[\s;}]/.test(script[i]!)) return false
      continue
    }
    return false
  }
  return true
}

/** Whether an awk program has no way to write a file or run a command. */
export const awkProgramIsInert = (program: string): boolean =>
  !/system|getline|close|fflush|\||>|@|ENVIRON|PROCINFO|printf?\s*\(?[^;}]*>/.test(program)
