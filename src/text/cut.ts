/**
 * Every cut of text in the project goes through here, so that none lands inside a UTF-16
 * surrogate pair: half an emoji is a lone surrogate, which UTF-8 cannot carry, and a strict
 * JSON reader (the Python MCP SDK's) rejects the whole message that holds it.
 * Indices are UTF-16 code units, like String's; a cut moves by at most one unit.
 */

const isHigh = (code: number) => code >= 0xd800 && code <= 0xdbff
const isLow = (code: number) => code >= 0xdc00 && code <= 0xdfff

/** Whether `i` falls between the two halves of a surrogate pair. */
const splitsPair = (text: string, i: number): boolean =>
  i > 0 && i < text.length && isHigh(text.charCodeAt(i - 1)) && isLow(text.charCodeAt(i))

/** The end of a head cut: `end`, or one before it when `end` would split a pair. */
export const cutEnd = (text: string, end: number): number => {
  const at = Math.max(0, Math.min(text.length, Math.trunc(end)))
  return splitsPair(text, at) ? at - 1 : at
}

/** The start of a tail cut: `start`, or one after it when `start` would split a pair. */
export const cutStart = (text: string, start: number): number => {
  const at = Math.max(0, Math.min(text.length, Math.trunc(start)))
  return splitsPair(text, at) ? at + 1 : at
}

/** At most the first `max` code units of `text`, whole code points only. */
export const headOf = (text: string, max: number): string =>
  text.length <= max ? text : text.slice(0, cutEnd(text, max))

/** At most the last `max` code units of `text`, whole code points only. */
export const tailOf = (text: string, max: number): string =>
  text.length <= max ? text : text.slice(cutStart(text, text.length - max))

/** `text` within `max` code units: cut, with `ellipsis` (counted in `max`) at the end when it was. */
export const clip = (text: string, max: number, ellipsis = "…"): string =>
  text.length <= max ? text : `${headOf(text, Math.max(0, max - ellipsis.length))}${ellipsis}`

/** The text between `start` and `end`, both moved off a pair's middle (start forward, end back). */
export const sliceWhole = (text: string, start: number, end: number = text.length): string =>
  text.slice(cutStart(text, start), Math.max(cutStart(text, start), cutEnd(text, end)))
