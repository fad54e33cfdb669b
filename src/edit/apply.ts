/**
 * The edit cascade: the nine replacers in order, the first that finds anything decides.
 * One match is applied; several are an error listing every candidate's line (unless
 * replaceAll); none is an error showing the closest region. A fuzzy match's newString is
 * adapted to the file (adapt.ts). Works on text: decoding, BOM and line endings are the
 * caller's (text.ts).
 */
import { adaptReplacement, detectIndentUnit } from "./adapt.ts"
import { showRegion } from "./anchor-check.ts"
import { nearestRegion } from "./near-miss.ts"
import { Lines, type ReplacerName, replacers, type Span } from "./replacers.ts"
import { decodeText, encodeText, lineOf, looksBinary, normalizeInput } from "./text.ts"

export interface EditRequest {
  readonly oldString: string
  readonly newString: string
  readonly replaceAll?: boolean
}

export type EditOutcome =
  | {
      readonly _tag: "Applied"
      readonly text: string
      readonly replacer: ReplacerName
      readonly count: number
      /** 1-based first line of each replaced region, in the new text. */
      readonly lines: ReadonlyArray<number>
    }
  | { readonly _tag: "NotFound"; readonly message: string }
  | { readonly _tag: "Ambiguous"; readonly message: string; readonly lines: ReadonlyArray<number> }
  | { readonly _tag: "NoChange"; readonly message: string }

/** Every candidate's line, so the model can pick one in its next call (the result cap bounds a huge list). */
const lineList = (lines: ReadonlyArray<number>) => lines.join(", ")

/** The spaces and tabs from `end` to the end of its line, when nothing else follows there. */
const tailAfter = (text: string, end: number): string => {
  if (end === 0 || text[end - 1] === "\n") return ""
  let stop = end
  while (text[stop] === " " || text[stop] === "\t") stop++
  return stop === text.length || text[stop] === "\n" ? text.slice(end, stop) : ""
}

/** Keeps the first of overlapping spans, in file order. */
const disjoint = (spans: ReadonlyArray<Span>): Array<Span> => {
  const sorted = [...spans].sort((a, b) => a.start - b.start || b.end - a.end)
  const out: Array<Span> = []
  for (const s of sorted) if (out.length === 0 || s.start >= out[out.length - 1]!.end) out.push(s)
  return out
}

const NUMBERED = /^ *(\d+)\t/

/**
 * oldString copied from read's output with its `<number>\t` prefixes: the numbers are
 * consecutive, so they are stripped (from newString's lines too) and the match must start at
 * the first number's line.
 */
const withoutLineNumbers = (request: EditRequest): { request: EditRequest; line: number } | undefined => {
  const lines = request.oldString.split("\n")
  if (lines[lines.length - 1] === "") lines.pop()
  const numbers = lines.map((l) => NUMBERED.exec(l)?.[1])
  if (numbers.some((n) => n === undefined)) return undefined
  const first = Number(numbers[0])
  if (!numbers.every((n, i) => Number(n) === first + i)) return undefined
  const strip = (s: string) =>
    s
      .split("\n")
      .map((l) => l.replace(NUMBERED, ""))
      .join("\n")
  return {
    request: { ...request, oldString: strip(request.oldString), newString: strip(request.newString) },
    line: first
  }
}

/** Applies one edit to LF text. oldString and newString must already be LF. */
export const applyEdit = (text: string, request: EditRequest): EditOutcome => {
  const outcome = cascade(text, request)
  if (outcome._tag !== "NotFound") return outcome
  const numbered = withoutLineNumbers(request)
  if (numbered === undefined) return outcome
  const retry = cascade(text, numbered.request)
  // The numbers say where the text is: a match anywhere else is not the one meant.
  if (retry._tag === "Applied" && retry.count === 1 && retry.lines[0] === numbered.line) return retry
  return outcome
}

const cascade = (text: string, request: EditRequest): EditOutcome => {
  const { oldString, newString } = request
  if (oldString === newString) {
    return {
      _tag: "NoChange",
      message:
        "oldString and newString are identical, so there is nothing to change. Send the text as it should read after the edit in newString."
    }
  }
  const lines = new Lines(text)
  for (const replacer of replacers) {
    const found = replacer.find(lines, oldString)
    if (found === undefined || found.spans.length === 0) continue
    const spans = disjoint(found.spans)
    const at = spans.map((s) => lineOf(text, s.start))
    if (found.unclear !== undefined) {
      const [candidate, other] = found.unclear
      return {
        _tag: "Ambiguous",
        lines: found.unclear.map((r) => r.first + 1),
        message: [
          `oldString is not in the file exactly. Its first and last lines match line ${candidate!.first + 1}, but the lines between them do not match it, and the whole of oldString is about as close to another place (line ${other!.first + 1}), so it is unclear which block is meant; no edit was made.`,
          `The block its first and last lines match (${Math.round(candidate!.score * 100)}% alike):`,
          showRegion(lines.lines, candidate!),
          `The other place it resembles (${Math.round(other!.score * 100)}% alike):`,
          showRegion(lines.lines, other!),
          "Read the block you mean and copy its exact current lines into oldString."
        ].join("\n")
      }
    }
    if (found.ambiguous === true) {
      return {
        _tag: "Ambiguous",
        lines: at,
        message: `oldString is not in the file exactly, and ${spans.length} similar blocks could be meant (lines ${lineList(at)}); no edit was made. Copy the exact current text of the one you mean (read those lines first) into oldString.`
      }
    }
    if (spans.length > 1 && request.replaceAll !== true) {
      return {
        _tag: "Ambiguous",
        lines: at,
        message: `oldString matches ${spans.length} places (lines ${lineList(at)}); no edit was made. Add surrounding lines to oldString so it matches only the one you mean, or set replaceAll to change every one.`
      }
    }
    const unit = replacer.name === "simple" || replacer.name === "multiOccurrence" ? "" : detectIndentUnit(text)
    const replacement = found.adaptNew?.(newString) ?? newString
    let out = text
    const replaced: Array<{ start: number; length: number }> = []
    const exact = replacer.name === "simple" || replacer.name === "multiOccurrence"
    for (const hit of [...spans].reverse()) {
      const atLineStart = hit.start === 0 || text[hit.start - 1] === "\n"
      // Whole lines matched: the whitespace after the last one is that line's (adapt.ts).
      const tail = atLineStart || found.find.includes("\n") ? tailAfter(text, hit.end) : ""
      const span = { ...hit, end: hit.end + tail.length }
      const matched = text.slice(span.start, span.end)
      const adapted =
        exact && tail === ""
          ? replacement
          : adaptReplacement({ matched, find: found.find, replacement, unit, atLineStart, tail })
      out = out.slice(0, span.start) + adapted + out.slice(span.end)
      replaced.push({ start: span.start, length: adapted.length - (span.end - span.start) })
    }
    if (out === text) {
      return {
        _tag: "NoChange",
        message: `oldString was found (lines ${lineList(at)}) but, fitted to the file, newString says the same, so nothing would change. Send the text as it should read after the edit.`
      }
    }
    // Line numbers in the new text: each span shifts by the growth of those before it.
    let shift = 0
    const newLines: Array<number> = []
    for (const r of [...replaced].reverse()) {
      newLines.push(lineOf(out, r.start + shift))
      shift += r.length
    }
    return { _tag: "Applied", text: out, replacer: replacer.name, count: spans.length, lines: newLines }
  }
  const near = nearestRegion(lines.lines, oldString)
  return {
    _tag: "NotFound",
    message: [
      "oldString was not found in the file; no edit was made.",
      near === undefined
        ? "Nothing in the file resembles it: read the file and copy the exact lines to change."
        : `${near.text}\nCopy the current text (without the line-number prefix) into oldString and try again.`
    ].join("\n")
  }
}

export type FileEditOutcome =
  | (Extract<EditOutcome, { _tag: "Applied" }> & { readonly bytes: Uint8Array; readonly before: string })
  | Exclude<EditOutcome, { _tag: "Applied" }>
  | { readonly _tag: "EmptyOld"; readonly message: string }
  | { readonly _tag: "Binary"; readonly message: string }

/**
 * Applies an edit to a file's bytes: BOM and line endings are taken off, the model's strings
 * are brought to LF, and both are put back on the result, so no byte outside the edit changes.
 */
export const applyEditToBytes = (bytes: Uint8Array, request: EditRequest): FileEditOutcome => {
  if (looksBinary(bytes)) {
    return { _tag: "Binary", message: "This is a binary file (it contains NUL bytes); edit changes text files only." }
  }
  if (request.oldString === "") {
    return {
      _tag: "EmptyOld",
      message:
        "oldString is empty but the file already exists. To change part of it, put the exact current lines in oldString; to replace all of it, use write."
    }
  }
  const file = decodeText(bytes)
  const outcome = applyEdit(file.text, {
    oldString: normalizeInput(request.oldString),
    newString: normalizeInput(request.newString),
    ...(request.replaceAll === undefined ? {} : { replaceAll: request.replaceAll })
  })
  if (outcome._tag !== "Applied") return outcome
  return { ...outcome, before: file.text, bytes: encodeText({ ...file, text: outcome.text }) }
}
