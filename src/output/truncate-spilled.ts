/**
 * adaptiveTruncate for an output too large to hold: it works from the output's head and tail
 * (kept by the writer) and its line and character counts, so shaping a 200 MB output reads
 * no more than what the model and the UI will see. Same budgets, same marker, same 40/60 split.
 */
import { cutEnd, cutStart } from "../text/cut.ts"
import type { TruncateDirection } from "../tool/tool.ts"
import type { OutputView } from "./spill.ts"
import {
  adaptiveTruncate,
  HEAD_SHARE,
  splitLines,
  type Truncated,
  type TruncateOptions,
  takeLines
} from "./truncate.ts"

type Spilled = Extract<OutputView, { kind: "spilled" }>

export const truncateSpilled = (view: Spilled, options: TruncateOptions): Truncated => {
  // The head is the whole output: nothing was dropped from memory's view of it.
  if (view.head.length >= view.chars) return adaptiveTruncate(view.head, options)
  const direction: TruncateDirection = options.direction
  // Whole lines only: the head's last line and the tail's first are usually cut.
  const headLines = splitLines(view.head)
  if (headLines.length > 0 && !headLines[headLines.length - 1]!.endsWith("\n")) headLines.pop()
  const tailLines = splitLines(view.tail).slice(1)

  const sample = options.marker({
    fromLine: view.lines,
    toLine: view.lines,
    totalLines: view.lines,
    omittedChars: view.chars
  })
  const chars = Math.max(0, options.maxChars - sample.length - 16)
  const count = Math.max(0, options.maxLines - 1)
  let head = 0
  let tail = 0
  if (direction === "head") head = takeLines(headLines, chars, count, false)
  else if (direction === "tail") tail = takeLines(tailLines, chars, count, true)
  else {
    head = takeLines(headLines, Math.floor(chars * HEAD_SHARE), Math.floor(count * HEAD_SHARE), false)
    const used = headLines.slice(0, head).reduce((n, l) => n + l.length, 0)
    tail = takeLines(tailLines, chars - used, count - head, true)
  }

  if (head === 0 && tail === 0) {
    // Lines too long for the budget (one 200 MB line): cut by characters at both ends.
    const a = direction === "tail" ? 0 : cutEnd(view.head, Math.floor(chars * (direction === "head" ? 1 : HEAD_SHARE)))
    const b = direction === "head" ? 0 : chars - a
    const end = view.tail.slice(cutStart(view.tail, view.tail.length - b))
    const omitted = {
      fromLine: 1,
      toLine: view.lines,
      totalLines: view.lines,
      omittedChars: view.chars - a - end.length
    }
    const text = `${view.head.slice(0, a)}\n${options.marker(omitted)}\n${end}`
    return { text, truncated: true, omitted }
  }

  const headText = headLines.slice(0, head).join("")
  const tailText = tailLines.slice(tailLines.length - tail).join("")
  const omitted = {
    fromLine: head + 1,
    toLine: view.lines - tail,
    totalLines: view.lines,
    omittedChars: view.chars - headText.length - tailText.length
  }
  return { text: `${headText}${options.marker(omitted)}\n${tailText}`, truncated: true, omitted }
}
