/**
 * Search results: only identical lines collapse (into the first, with a count). A match is
 * never dropped; blank lines and `--` context separators are left alone (they carry structure).
 */
export const collapseDuplicates = (
  lines: ReadonlyArray<string>
): { readonly text: string; readonly collapsed: boolean } => {
  const counts = new Map<string, number>()
  for (const line of lines) {
    const key = line.replace(/\r?\n$/, "")
    if (key.trim() === "" || key === "--") continue
    counts.set(key, (counts.get(key) ?? 0) + 1)
  }
  const seen = new Set<string>()
  const out: Array<string> = []
  let collapsed = false
  for (const line of lines) {
    const key = line.replace(/\r?\n$/, "")
    const count = counts.get(key)
    if (count === undefined || count === 1) {
      out.push(line)
      continue
    }
    collapsed = true
    if (seen.has(key)) continue
    seen.add(key)
    out.push(`${key} [×${count}]${line.endsWith("\n") ? "\n" : ""}`)
  }
  return { text: out.join(""), collapsed }
}
