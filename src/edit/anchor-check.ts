/**
 * Whether an anchored match (first and last line equal, the middle only alike) is the block the
 * model meant. The anchors alone prove little — every function ends with `}` and two blocks
 * can share their opening line — so the middle decides: it must be close to this candidate and
 * clearly closer to it than to any other stretch of the file, the whole block compared (the
 * anchors count: they are equal at the candidate). Otherwise the model has quoted
 * one block's anchors around another block's body (or a body found nowhere), and the edit is
 * refused with the closest regions shown.
 */
import { distance } from "fastest-levenshtein"
import { isBlank } from "./text.ts"

/** The candidate must beat every other region by more than this (mean Levenshtein similarity per line). */
export const CLEARLY_CLOSER = 0.05
/** Windows scored with every line compared; past it, only windows an equal line points to. */
const FULL_SCAN = 100_000

const similarity = (x: string, y: string): number => {
  const longest = Math.max(x.length, y.length)
  return longest === 0 ? 1 : 1 - distance(x, y) / longest
}

export interface Region {
  /** 0-based first and last line of the region in the file. */
  readonly first: number
  readonly last: number
  readonly score: number
}

/**
 * The region of the file, outside lines [from, to], whose non-blank lines are most like
 * `block`'s non-blank lines, line for line; undefined when the file has no such stretch.
 */
export const closestElsewhere = (
  trimmed: ReadonlyArray<string>,
  block: ReadonlyArray<string>,
  from: number,
  to: number
): Region | undefined => {
  const want = block.map((l) => l.trim()).filter((l) => l !== "")
  if (want.length === 0) return undefined
  const at: Array<number> = []
  for (let i = 0; i < trimmed.length; i++) if (!isBlank(trimmed[i]!)) at.push(i)
  const starts = new Set<number>()
  if (at.length * want.length <= FULL_SCAN) for (let w = 0; w + want.length <= at.length; w++) starts.add(w)
  else {
    const byText = new Map<string, Array<number>>()
    at.forEach((line, w) => {
      const list = byText.get(trimmed[line]!)
      if (list === undefined) byText.set(trimmed[line]!, [w])
      else list.push(w)
    })
    want.forEach((l, j) => {
      for (const w of byText.get(l) ?? []) if (w - j >= 0 && w - j + want.length <= at.length) starts.add(w - j)
    })
  }
  let best: Region | undefined
  for (const w of starts) {
    const first = at[w]!
    const last = at[w + want.length - 1]!
    if (last >= from && first <= to) continue
    let total = 0
    for (let j = 0; j < want.length; j++) total += similarity(want[j]!, trimmed[at[w + j]!]!)
    const score = total / want.length
    if (best === undefined || score > best.score) best = { first, last, score }
  }
  return best
}

/** A region in `read`'s format (line numbers), at most `max` lines. */
export const showRegion = (lines: ReadonlyArray<string>, region: Region, max = 8): string => {
  const last = Math.min(region.last, region.first + max - 1)
  const width = String(last + 1).length
  const out: Array<string> = []
  for (let n = region.first; n <= last; n++) out.push(`${String(n + 1).padStart(width)}\t${lines[n]}`)
  if (last < region.last) out.push(`… (${region.last - last} more lines)`)
  return out.join("\n")
}
