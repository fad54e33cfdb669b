/**
 * What a failed edit shows the model: the region of the file closest to its oldString, with
 * line numbers (as `read` prints them), and how each differing line differs, so the next call
 * can be right in one step.
 */
import { lineSimilarity } from "./replacers.ts"
import { isBlank } from "./text.ts"

/** Lines of oldString compared per window at most (the rest only make the search slower). */
const SAMPLE = 12
const MAX_SHOWN = 12

export interface NearMiss {
  /** 1-based first line of the region. */
  readonly line: number
  readonly similarity: number
  readonly text: string
}

const visible = (s: string) => JSON.stringify(s)

/** Windows scored in full; on a long file the rest are ruled out by their first line. */
const MAX_WINDOWS = 400

/** Start lines worth scoring: all of them in a short file, else those whose first line is most alike. */
const candidateStarts = (
  fileLines: ReadonlyArray<string>,
  sample: ReadonlyArray<string>,
  from: number
): Array<number> => {
  const all = Array.from({ length: Math.max(0, fileLines.length - from) }, (_, i) => from + i)
  if (all.length * sample.length <= MAX_WINDOWS * SAMPLE) return all
  const first = sample.find((l) => l.trim() !== "") ?? sample[0]!
  const offset = sample.indexOf(first)
  const scored = all.map((i) => ({ i, s: lineSimilarity(first, fileLines[i + offset] ?? "") }))
  scored.sort((a, b) => b.s - a.s)
  return scored.slice(0, MAX_WINDOWS).map((x) => x.i)
}

/**
 * The window of the file most like oldString, when anything is at least a little alike.
 * `from` (0-based) skips the lines before it; line numbers shown are always the file's.
 */
export const nearestRegion = (fileLines: ReadonlyArray<string>, find: string, from = 0): NearMiss | undefined => {
  const want = find.split("\n")
  if (want.length > 1 && want[want.length - 1] === "") want.pop()
  const sample = want.slice(0, SAMPLE)
  let best: { start: number; score: number } | undefined
  for (const i of candidateStarts(fileLines, sample, from)) {
    let score = 0
    for (let k = 0; k < sample.length && i + k < fileLines.length; k++) {
      const a = sample[k]!
      const b = fileLines[i + k]!
      score += sample.length === 1 && b.includes(a.trim()) && a.trim() !== "" ? 1 : lineSimilarity(a, b)
    }
    score /= sample.length
    if (best === undefined || score > best.score) best = { start: i, score }
  }
  if (best === undefined || best.score < 0.4) return undefined
  const region = fileLines.slice(best.start, best.start + want.length)
  const lines: Array<string> = []
  const width = String(best.start + region.length).length
  region.slice(0, MAX_SHOWN).forEach((text, k) => {
    lines.push(`${String(best!.start + k + 1).padStart(width)}\t${text}`)
  })
  if (region.length > MAX_SHOWN) lines.push(`… (${region.length - MAX_SHOWN} more lines)`)
  const differences: Array<string> = []
  want.forEach((sent, k) => {
    const has = region[k]
    if (has === undefined || has === sent || differences.length >= 6) return
    const n = best!.start + k + 1
    if (has.trim() === sent.trim()) {
      differences.push(`- line ${n}: only whitespace differs: the file has ${visible(has)}, you sent ${visible(sent)}`)
    } else if (isBlank(has) !== isBlank(sent)) {
      differences.push(
        `- line ${n}: ${isBlank(has) ? "the file has a blank line here" : `you sent a blank line; the file has ${visible(has)}`}`
      )
    } else {
      differences.push(`- line ${n}: the file has ${visible(has)}, you sent ${visible(sent)}`)
    }
  })
  const text = [
    `The closest text is at line ${best.start + 1} (${Math.round(best.score * 100)}% alike):`,
    ...lines,
    ...(differences.length > 0 ? ["How it differs:", ...differences] : [])
  ].join("\n")
  return { line: best.start + 1, similarity: best.score, text }
}
