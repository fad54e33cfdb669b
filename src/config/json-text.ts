/**
 * JSON for config files, parsed strictly. `JSON.parse` keeps the last of two equal keys and drops
 * the first without a word (two `permissions` blocks: the first deny list vanishes), and nothing
 * bounds how deep a file nests. One iterative pass over the text finds both before it is parsed,
 * so neither a duplicate nor a file nested 100,000 levels deep gets further than a message.
 */

/** Deeper than any real config (the deepest key today is 5 levels); past it a file is refused. */
export const MAX_DEPTH = 64

interface Frame {
  readonly object: boolean
  readonly keys: Set<string>
  /** The key (object) or index (array) of the value being read, for the message's path. */
  at: string | number | undefined
  expectKey: boolean
}

const pathOf = (stack: ReadonlyArray<Frame>, depth = stack.length): string =>
  stack
    .slice(0, depth)
    .map((f, i) => (typeof f.at === "number" ? `[${f.at}]` : i === 0 ? String(f.at) : `.${String(f.at)}`))
    .join("")

/** A duplicate key or too deep a nesting, said so a person can fix it; undefined when neither. */
export const structureProblem = (text: string): string | undefined => {
  const stack: Array<Frame> = []
  const n = text.length
  let i = 0
  while (i < n) {
    const c = text.charCodeAt(i)
    if (c === 0x22 /* " */) {
      let j = i + 1
      while (j < n && text.charCodeAt(j) !== 0x22) j += text.charCodeAt(j) === 0x5c /* \ */ ? 2 : 1
      const top = stack[stack.length - 1]
      if (top?.object === true && top.expectKey) {
        let key: string
        try {
          key = JSON.parse(text.slice(i, j + 1)) as string
        } catch {
          return undefined // not JSON: the parser says where
        }
        if (top.keys.has(key)) {
          top.at = key
          const where = stack.length === 1 ? "" : ` (in ${pathOf(stack, stack.length - 1)})`
          return `the key "${key}" appears twice${where}; JSON keeps only the last one, so the first would be ignored. Merge the two into one.`
        }
        top.keys.add(key)
        top.at = key
        top.expectKey = false
      }
      i = j + 1
      continue
    }
    if (c === 0x7b /* { */ || c === 0x5b /* [ */) {
      if (stack.length >= MAX_DEPTH) {
        return `it nests deeper than ${MAX_DEPTH} levels (at ${pathOf(stack) || "the top level"}); no setting is that deep.`
      }
      const object = c === 0x7b
      stack.push({ object, keys: new Set(), at: object ? undefined : 0, expectKey: object })
    } else if (c === 0x7d /* } */ || c === 0x5d /* ] */) {
      stack.pop()
    } else if (c === 0x2c /* , */) {
      const top = stack[stack.length - 1]
      if (top?.object === true) top.expectKey = true
      else if (top !== undefined && typeof top.at === "number") top.at++
    }
    i++
  }
  return undefined
}

/** The value in `text`, or what is wrong with it, worded to follow the file's name. */
export const parseJsonStrict = (
  raw: string
): { readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly message: string } => {
  // A UTF-8 byte order mark (what several Windows editors write first) is not JSON, but it is
  // not part of the content either: read the file as if it were not there.
  const text = raw.charCodeAt(0) === 0xfeff ? raw.slice(1) : raw
  const problem = structureProblem(text)
  if (problem !== undefined) return { ok: false, message: `cannot be used: ${problem}` }
  try {
    return { ok: true, value: JSON.parse(text) as unknown }
  } catch (e) {
    return { ok: false, message: `is not valid JSON: ${(e as Error).message}` }
  }
}
