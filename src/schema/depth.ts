/** How deep a JSON value nests, measured without recursion (the value cannot exhaust the stack). */

/** Whether objects and arrays in `value` nest deeper than `max` levels. */
export const exceedsDepth = (value: unknown, max: number): boolean => {
  if (typeof value !== "object" || value === null) return false
  // Most arguments are one object of scalars: no walk for them.
  let nested = false
  for (const child of Object.values(value)) if (typeof child === "object" && child !== null) nested = true
  if (!nested) return max < 1
  const stack: Array<{ readonly value: unknown; readonly depth: number }> = [{ value, depth: 0 }]
  while (stack.length > 0) {
    const top = stack.pop()!
    if (typeof top.value !== "object" || top.value === null) continue
    if (top.depth >= max) return true
    for (const child of Object.values(top.value)) stack.push({ value: child, depth: top.depth + 1 })
  }
  return false
}

/**
 * Arguments may nest this deep, no deeper. Every walk over them (coercion, decoding, the
 * permission check's canonical form, events) then stays far from the stack's limit.
 */
export const MAX_ARGUMENT_DEPTH = 200
