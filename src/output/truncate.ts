/**
 * Cuts an output to a budget of characters and lines, keeping a head and/or a tail.
 * Both cuts snap to line boundaries: a raw character index lands mid-token and the model
 * reads half an identifier as if it were whole. A single over-long line is cut at a
 * character boundary (never inside a surrogate pair), with a marker.
 */

import { cutEnd, cutStart } from "../text/cut.ts"
import type { TruncateDirection } from "../tool/tool.ts"

export interface TruncateOptions {
  readonly maxChars: number
  readonly maxLines: number
  readonly direction: TruncateDirection
  /** Builds the marker put where lines were omitted. Lines are 1-based and inclusive. */
  readonly marker: (omitted: OmittedRange) => string
  /** `countLines(text)`, when the caller has it already. */
  readonly lines?: number
}

export interface OmittedRange {
  readonly fromLine: number
  readonly toLine: number
  readonly totalLines: number
  readonly omittedChars: number
}

export interface Truncated {
  readonly text: string
  readonly truncated: boolean
  readonly omitted?: OmittedRange
}

/** Share of the budget the head keeps in "both" mode; the tail gets the rest (errors live there). */
export const HEAD_SHARE = 0.4

/** Splits into lines that keep their terminators, so joining them gives the text back. */
export const splitLines = (text: string): Array<string> => {
  const lines: Array<string> = []
  let start = 0
  for (;;) {
    const nl = text.indexOf("\n", start)
    if (nl === -1) break
    lines.push(text.slice(start, nl + 1))
    start = nl + 1
  }
  if (start < text.length) lines.push(text.slice(start))
  return lines
}

/** Counts lines the way splitLines would, without allocating them. */
export const countLines = (text: string): number => {
  if (text.length === 0) return 0
  let n = 0
  for (let i = text.indexOf("\n"); i !== -1; i = text.indexOf("\n", i + 1)) n++
  return text.endsWith("\n") ? n : n + 1
}

const cutLongLine = (text: string, maxChars: number, direction: TruncateDirection): string => {
  const note = (n: number) => `[… ${n.toLocaleString("en-US")} characters omitted from this line …]`
  const room = Math.max(0, maxChars - note(text.length).length - 2)
  if (direction === "head") {
    const end = cutEnd(text, room)
    return `${text.slice(0, end)}\n${note(text.length - end)}`
  }
  if (direction === "tail") {
    const start = cutStart(text, text.length - room)
    return `${note(start)}\n${text.slice(start)}`
  }
  const headEnd = cutEnd(text, Math.floor(room * HEAD_SHARE))
  const tailStart = cutStart(text, text.length - (room - headEnd))
  return `${text.slice(0, headEnd)}\n${note(tailStart - headEnd)}\n${text.slice(tailStart)}`
}

/** Takes whole lines from one end while they fit both budgets. */
export const takeLines = (lines: ReadonlyArray<string>, chars: number, count: number, fromEnd: boolean): number => {
  let used = 0
  let n = 0
  while (n < lines.length && n < count) {
    const line = lines[fromEnd ? lines.length - 1 - n : n]!
    if (used + line.length > chars) break
    used += line.length
    n++
  }
  return n
}

export const adaptiveTruncate = (text: string, options: TruncateOptions): Truncated => {
  const { maxChars, maxLines, direction } = options
  // Most outputs fit: decide that without allocating their lines.
  if (text.length <= maxChars && (options.lines ?? countLines(text)) <= maxLines) return { text, truncated: false }
  const lines = splitLines(text)

  if (lines.length === 1) return { text: cutLongLine(text, maxChars, direction), truncated: true }

  // Reserve room for the marker; a sample marker is as long as any real one within a few digits.
  const sample = options.marker({
    fromLine: lines.length,
    toLine: lines.length,
    totalLines: lines.length,
    omittedChars: text.length
  })
  const chars = Math.max(0, maxChars - sample.length - 16)
  const count = Math.max(0, maxLines - 1)

  let head = 0
  let tail = 0
  if (direction === "head") head = takeLines(lines, chars, count, false)
  else if (direction === "tail") tail = takeLines(lines, chars, count, true)
  else {
    head = takeLines(lines, Math.floor(chars * HEAD_SHARE), Math.floor(count * HEAD_SHARE), false)
    const headChars = lines.slice(0, head).reduce((n, l) => n + l.length, 0)
    tail = takeLines(lines.slice(head), chars - headChars, count - head, true)
  }

  // Nothing whole fits: the first (or last) line alone is over budget. Cut it by characters.
  if (head === 0 && tail === 0) {
    const keep = direction === "tail" ? lines[lines.length - 1]! : lines[0]!
    const cut = cutLongLine(keep, Math.floor(chars / 2), direction === "tail" ? "tail" : "head")
    const omitted: OmittedRange =
      direction === "tail"
        ? { fromLine: 1, toLine: lines.length - 1, totalLines: lines.length, omittedChars: text.length - keep.length }
        : { fromLine: 2, toLine: lines.length, totalLines: lines.length, omittedChars: text.length - keep.length }
    const marker = options.marker(omitted)
    return { text: direction === "tail" ? `${marker}\n${cut}` : `${cut}\n${marker}`, truncated: true, omitted }
  }

  const headText = lines.slice(0, head).join("")
  const tailText = lines.slice(lines.length - tail).join("")
  const omitted: OmittedRange = {
    fromLine: head + 1,
    toLine: lines.length - tail,
    totalLines: lines.length,
    omittedChars: text.length - headText.length - tailText.length
  }
  const marker = options.marker(omitted)
  const sep = headText === "" || headText.endsWith("\n") ? "" : "\n"
  return { text: `${headText}${sep}${marker}\n${tailText}`, truncated: true, omitted }
}

/** Keeps the last maxChars characters, starting at a line boundary when one is near. */
export const tailCap = (text: string, maxChars: number): string => {
  if (text.length <= maxChars) return text
  let start = cutStart(text, text.length - maxChars)
  const nl = text.indexOf("\n", start)
  if (nl !== -1 && nl - start < 200) start = nl + 1
  return text.slice(start)
}
