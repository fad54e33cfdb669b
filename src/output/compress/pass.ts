/**
 * The one streaming pass behind both compressors (logs and search results), whether the output
 * is in memory or spilled to a file: lines go in one at a time, and what it holds stays bounded
 * by the model's budget whatever the output's size. It keeps the lines its policy marks (the
 * head, failure lines, every search match) while the budget lasts, a ring of the last lines
 * (the tail), and runs of lines left out only as counts: each run becomes one marker naming the
 * stored line range and the `output` call that retrieves it.
 */
import { cutEnd } from "../../text/cut.ts"
import type { OmittedRange } from "../truncate.ts"

/** One line of the output as the pass holds it. */
export interface Line {
  /** 0-based line number in the stored output. */
  readonly index: number
  /** The line as the model would see it (colour stripped, an over-long one clipped), with its terminator. */
  readonly text: string
  /** The stored line's characters, terminator included. */
  readonly chars: number
  /** Whether the policy wants it shown. */
  keep: boolean
  /** Whether it looks like a failure: one the budget could not hold is counted in the marker. */
  failure: boolean
  /** Kept only within MINOR_SHARE of the budget (warnings): never at a failure's expense. */
  minor: boolean
  /** Identical lines folded into this one (search results). */
  repeats: number
}

/** What a compressor decides; the pass does the rest. */
export interface Policy {
  /** Lines kept at the end whatever they say (the budget's share permitting). */
  readonly tailLines: number
  /**
   * Sees each line as it arrives, with the lines still in the tail ring (oldest first), and marks
   * `keep` on it or on them. Returns false when it folded the line into an earlier one.
   */
  readonly admit: (line: Line, recent: ReadonlyArray<Line>) => boolean
  /** The line was left out (it will never be shown). */
  readonly omitted?: (line: Line) => void
}

export interface PassOptions {
  /** Lines in the stored output: the markers say "of N". */
  readonly totalLines: number
  /** Characters in the stored output: one that fits the budget whole needs no room set aside. */
  readonly totalChars: number
  readonly maxChars: number
  readonly maxLines: number
  /** Names an omitted range (1-based, inclusive) and the `output` call that gets it back. */
  readonly marker: (range: OmittedRange) => string
}

export interface Compressed {
  readonly text: string
  /** Whether anything was folded or left out. */
  readonly collapsed: boolean
}

export interface LineSink {
  /** The next line, with its terminator (none on a last line that has none). */
  readonly push: (line: string) => void
  readonly finish: () => Compressed
}

/** The tail's share of the budget, when the policy keeps a tail. */
const TAIL_SHARE = 0.3
/** The share of the body's budget minor lines (warnings) may take. */
const MINOR_SHARE = 0.25

const n = (x: number) => x.toLocaleString("en-US")

interface Gap {
  readonly from: number
  to: number
  chars: number
  /** Characters the left-out lines would take as shown. */
  shown: number
  /** The lines themselves while they are few: a marker longer than they are saves nothing. */
  held: Array<Line> | undefined
  /** Failure lines the budget could not hold. */
  failures: number
}

const failuresNote = (count: number) =>
  `[… ${n(count)} more failure-looking lines did not fit the budget; they are in the range below …]\n`

export const makePass = (policy: Policy, options: PassOptions): LineSink => {
  const { totalLines, totalChars, maxChars, maxLines, marker } = options
  // Markers only ever replace longer runs, so an output that fits whole stays within the budget.
  const fits = totalChars <= maxChars && totalLines <= maxLines
  /** A kept line is cut past this: one minified bundle must not take the whole budget. */
  const lineMax = fits ? maxChars : Math.max(200, Math.floor(maxChars / 10))
  const tailLines = Math.min(policy.tailLines, Math.floor(maxLines * TAIL_SHARE))
  const tailChars = tailLines === 0 ? 0 : Math.floor(maxChars * TAIL_SHARE)
  // Room for the last marker (and its note), which the tail always gets.
  const markerRoom =
    marker({ fromLine: totalLines, toLine: totalLines, totalLines, omittedChars: 1e15 }).length +
    failuresNote(totalLines).length +
    2
  const bodyChars = fits ? maxChars : maxChars - tailChars - markerRoom
  const bodyLines = fits ? maxLines : maxLines - tailLines - 2

  const minorChars = Math.floor(bodyChars * MINOR_SHARE)
  const minorLines = Math.floor(bodyLines * MINOR_SHARE)
  let minorUsedChars = 0
  let minorUsedLines = 0

  const out: Array<Line | string> = []
  let outChars = 0
  let outLines = 0
  /** The body's budget ran out: everything else up to the tail is left out. */
  let full = false
  const ring: Array<Line> = []
  let ringChars = 0
  let gap: Gap | undefined
  let index = 0
  let collapsed = false

  /** What closing the gap adds: its lines when they are shorter than a marker, else the marker. */
  const gapPieces = (
    g: Gap
  ): { readonly pieces: ReadonlyArray<Line | string>; readonly chars: number; readonly lines: number } => {
    const text = `${g.failures > 0 ? failuresNote(g.failures) : ""}${marker({
      fromLine: g.from + 1,
      toLine: g.to + 1,
      totalLines,
      omittedChars: g.chars
    })}\n`
    if (g.held !== undefined && g.failures === 0 && text.length >= g.shown) {
      return { pieces: g.held, chars: g.shown, lines: g.held.length }
    }
    return { pieces: [text], chars: text.length, lines: g.failures > 0 ? 2 : 1 }
  }

  const append = (pieces: ReadonlyArray<Line | string>) => {
    for (const p of pieces) {
      const text = typeof p === "string" ? p : p.text
      out.push(p)
      outChars += text.length
      outLines += typeof p === "string" ? text.split("\n").length - 1 : 1
      if (typeof p === "string") collapsed = true
    }
  }

  const leaveOut = (line: Line) => {
    policy.omitted?.(line)
    if (gap === undefined) gap = { from: line.index, to: line.index, chars: 0, shown: 0, held: [], failures: 0 }
    gap.to = line.index
    gap.chars += line.chars
    gap.shown += line.text.length
    if (line.keep && line.failure) gap.failures++
    if (gap.held !== undefined) {
      if (gap.shown <= markerRoom) gap.held.push(line)
      else gap.held = undefined
    }
  }

  /** A line leaving the tail ring: into the body while the budget lasts, else left out. */
  const settle = (line: Line) => {
    // A minor line past its share is left out; the budget stays open for failures. The marker
    // that closing the gap before it adds is its cost too.
    if (line.keep && line.minor && !full) {
      const closing = gap === undefined ? undefined : gapPieces(gap)
      const chars = (closing?.chars ?? 0) + line.text.length
      const lines = (closing?.lines ?? 0) + 1
      if (minorUsedChars + chars > minorChars || minorUsedLines + lines > minorLines) line.keep = false
      else {
        minorUsedChars += chars
        minorUsedLines += lines
      }
    }
    if (line.keep && !full) {
      const closing = gap === undefined ? undefined : gapPieces(gap)
      const chars = (closing?.chars ?? 0) + line.text.length
      const lines = (closing?.lines ?? 0) + 1
      if (outChars + chars <= bodyChars && outLines + lines <= bodyLines) {
        if (closing !== undefined) append(closing.pieces)
        gap = undefined
        append([line])
        return
      }
      if (!line.minor) full = true
    }
    leaveOut(line)
  }

  const clip = (line: string): string => {
    if (line.length <= lineMax) return line
    const end = cutEnd(line, lineMax)
    return `${line.slice(0, end)}[… ${n(line.length - end)} characters omitted from this line …]\n`
  }

  return {
    push: (raw) => {
      const line: Line = {
        index: index++,
        text: clip(raw),
        chars: raw.length,
        keep: false,
        failure: false,
        minor: false,
        repeats: 0
      }
      if (!policy.admit(line, ring)) {
        collapsed = true
        return
      }
      ring.push(line)
      ringChars += line.text.length
      while (ring.length > tailLines || (ring.length > 1 && ringChars > tailChars)) {
        const oldest = ring.shift()!
        ringChars -= oldest.text.length
        settle(oldest)
      }
    },
    finish: () => {
      // The tail is shown whatever it says: its room was set aside.
      if (gap !== undefined) append(gapPieces(gap).pieces)
      gap = undefined
      append(ring)
      const text = out
        .map((p) => {
          if (typeof p === "string") return p
          if (p.repeats === 0) return p.text
          const key = p.text.replace(/\r?\n$/, "")
          return `${key} [×${p.repeats + 1}]${p.text.slice(key.length)}`
        })
        .join("")
      return { text, collapsed }
    }
  }
}
