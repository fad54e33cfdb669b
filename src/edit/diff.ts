/**
 * Line diffs: an alignment of two sequences (used to line up what the model sent with what
 * the file holds) and a unified diff for UIs. Edits are local, so the common head and tail
 * are skipped first and only the middle is compared (LCS); a middle too large for that
 * becomes one replaced block, which is still a correct diff.
 */

/** One step of an alignment: a pair of indices, or an element only one side has. */
export type Step =
  | { readonly op: "same"; readonly a: number; readonly b: number }
  | { readonly op: "del"; readonly a: number }
  | { readonly op: "add"; readonly b: number }

const MAX_LCS_CELLS = 4_000_000

/** Aligns `a` and `b` (longest common subsequence under `eq`). */
export const align = <T>(
  a: ReadonlyArray<T>,
  b: ReadonlyArray<T>,
  eq: (x: T, y: T) => boolean = (x, y) => x === y
): Array<Step> => {
  let head = 0
  while (head < a.length && head < b.length && eq(a[head]!, b[head]!)) head++
  let tail = 0
  while (tail < a.length - head && tail < b.length - head && eq(a[a.length - 1 - tail]!, b[b.length - 1 - tail]!)) {
    tail++
  }
  const steps: Array<Step> = []
  for (let i = 0; i < head; i++) steps.push({ op: "same", a: i, b: i })
  const n = a.length - head - tail
  const m = b.length - head - tail
  if (n * m > MAX_LCS_CELLS) {
    for (let i = 0; i < n; i++) steps.push({ op: "del", a: head + i })
    for (let j = 0; j < m; j++) steps.push({ op: "add", b: head + j })
  } else {
    // lengths[i][j] = LCS of a[head+i..] and b[head+j..]
    const w = m + 1
    const lengths = new Uint32Array((n + 1) * w)
    for (let i = n - 1; i >= 0; i--) {
      for (let j = m - 1; j >= 0; j--) {
        lengths[i * w + j] = eq(a[head + i]!, b[head + j]!)
          ? lengths[(i + 1) * w + j + 1]! + 1
          : Math.max(lengths[(i + 1) * w + j]!, lengths[i * w + j + 1]!)
      }
    }
    let i = 0
    let j = 0
    while (i < n || j < m) {
      if (i < n && j < m && eq(a[head + i]!, b[head + j]!)) {
        steps.push({ op: "same", a: head + i, b: head + j })
        i++
        j++
      } else if (i < n && (j === m || lengths[(i + 1) * w + j]! >= lengths[i * w + j + 1]!)) {
        // Deletions before additions, as diff tools print them.
        steps.push({ op: "del", a: head + i })
        i++
      } else {
        steps.push({ op: "add", b: head + j })
        j++
      }
    }
  }
  for (let k = tail; k > 0; k--) steps.push({ op: "same", a: a.length - k, b: b.length - k })
  return steps
}

/**
 * Pairs each element of `a` with one of `b`: equal ones first (LCS), then, inside each run of
 * deleted and added elements, the ones at the same position (a changed line).
 */
export const pairUp = <T>(
  a: ReadonlyArray<T>,
  b: ReadonlyArray<T>,
  eq: (x: T, y: T) => boolean
): Array<number | undefined> => {
  const pairs: Array<number | undefined> = new Array(a.length).fill(undefined)
  const steps = align(a, b, eq)
  let dels: Array<number> = []
  let adds: Array<number> = []
  const flush = () => {
    for (let k = 0; k < Math.min(dels.length, adds.length); k++) pairs[dels[k]!] = adds[k]!
    dels = []
    adds = []
  }
  for (const s of steps) {
    if (s.op === "same") {
      flush()
      pairs[s.a] = s.b
    } else if (s.op === "del") dels.push(s.a)
    else adds.push(s.b)
  }
  flush()
  return pairs
}

/**
 * The alignment of two texts that share a long head and tail (an edit): the shared lines
 * outside 3 lines of context are left out, so a one-line change in a large file costs little.
 */
const localSteps = (a: ReadonlyArray<string>, b: ReadonlyArray<string>): Array<Step> => {
  let head = 0
  while (head < a.length && head < b.length && a[head] === b[head]) head++
  let tail = 0
  while (tail < a.length - head && tail < b.length - head && a[a.length - 1 - tail] === b[b.length - 1 - tail]) tail++
  const from = Math.max(0, head - 3)
  const keepTail = Math.min(tail, 3)
  const steps = align(a.slice(from, a.length - tail + keepTail), b.slice(from, b.length - tail + keepTail))
  return steps.map((s) =>
    s.op === "same"
      ? { op: "same", a: s.a + from, b: s.b + from }
      : s.op === "del"
        ? { op: "del", a: s.a + from }
        : { op: "add", b: s.b + from }
  )
}

const splitLines = (text: string): Array<string> => {
  if (text === "") return []
  const lines = text.split("\n")
  if (lines[lines.length - 1] === "") lines.pop()
  return lines
}

export interface DiffStats {
  readonly additions: number
  readonly deletions: number
}

/** A unified diff (3 lines of context) of two texts, with `---`/`+++` headers naming `path`. */
export const unifiedDiff = (path: string, before: string, after: string): { diff: string } & DiffStats => {
  const a = splitLines(before)
  const b = splitLines(after)
  const steps = localSteps(a, b)
  let additions = 0
  let deletions = 0
  for (const s of steps) {
    if (s.op === "add") additions++
    else if (s.op === "del") deletions++
  }
  const out: Array<string> = [`--- a/${path}`, `+++ b/${path}`]
  const context = 3
  let k = 0
  while (k < steps.length) {
    if (steps[k]!.op === "same") {
      k++
      continue
    }
    // A hunk: from `context` before the change to `context` after the last change that is
    // within 2*context of the next.
    const start = Math.max(0, k - context)
    let end = k
    let lastChange = k
    while (end < steps.length) {
      if (steps[end]!.op !== "same") lastChange = end
      else if (end - lastChange > 2 * context) break
      end++
    }
    end = Math.min(steps.length, lastChange + context + 1)
    const hunk = steps.slice(start, end)
    const aStart = firstIndex(hunk, "a", steps, start)
    const bStart = firstIndex(hunk, "b", steps, start)
    const aLen = hunk.filter((s) => s.op !== "add").length
    const bLen = hunk.filter((s) => s.op !== "del").length
    out.push(`@@ -${aLen === 0 ? aStart : aStart + 1},${aLen} +${bLen === 0 ? bStart : bStart + 1},${bLen} @@`)
    for (const s of hunk) {
      if (s.op === "same") out.push(` ${a[s.a]}`)
      else if (s.op === "del") out.push(`-${a[s.a]}`)
      else out.push(`+${b[s.b]}`)
    }
    k = end
  }
  return { diff: out.length === 2 ? "" : `${out.join("\n")}\n`, additions, deletions }
}

/** The 0-based index on side `side` where a hunk starts (for an empty side: the lines before it). */
const firstIndex = (hunk: ReadonlyArray<Step>, side: "a" | "b", steps: ReadonlyArray<Step>, start: number): number => {
  for (const s of hunk) {
    if (side === "a" && s.op !== "add") return s.a
    if (side === "b" && s.op !== "del") return s.b
  }
  for (let i = start - 1; i >= 0; i--) {
    const s = steps[i]!
    if (side === "a" && s.op !== "add") return s.a + 1
    if (side === "b" && s.op !== "del") return s.b + 1
  }
  return 0
}
