/**
 * Where bash and the grammar read the same text differently, before any parsing.
 *
 * - Blanks: bash splits words on space and tab only; the grammar also on `\r`, `\v`, `\f` and
 *   other Unicode space, so `echo a\v# x; touch y` is one comment to it and two commands to bash.
 *   Such characters (and every other control character but tab and newline) are refused.
 * - Line continuations: bash drops every unquoted `\<newline>` before it reads a token, so
 *   `$\<newline>(…)` is a substitution. The grammar keeps them in some places. The text is
 *   therefore analyzed twice, as written and with every `\<newline>` removed (what bash sees
 *   outside single quotes and quoted heredocs), and only a line both readings allow is allowed.
 */

// Tab and newline are the only control characters bash and the grammar agree on.
const UNSURE_CHARACTER = /[\0-\x08\x0b-\x1f\x7f-\x9f\u00a0\u1680\u2000-\u200f\u2028-\u202f\u205f-\u2064\u3000\ufeff]/u

/** A description of the first character the two readings disagree on, or undefined. */
export const unsureCharacter = (command: string): string | undefined => {
  const m = UNSURE_CHARACTER.exec(command)
  if (m === null) return undefined
  const code = m[0].codePointAt(0)!
  return `U+${code.toString(16).toUpperCase().padStart(4, "0")}`
}

/**
 * A backslash before a tab, or before a space at the start of a word, quotes that blank for
 * bash (`\<tab>ls` runs a program named "<tab>ls"); the grammar drops it or splits there.
 */
export const unsureEscape = (command: string): boolean => /\\\t|(?:^|[\s;&|()<>])\\ /.test(command)

/**
 * A comment that ends in a backslash-newline: bash ends the comment at the newline, so the
 * next line runs; both readings here (as written, and joined) may take it as comment.
 */
export const unsureComment = (command: string): boolean => /(?:^|[\s;&|()])#[^\n]*\\\n/.test(command)

/** The text with every backslash-newline removed, or undefined when it has none. */
export const joinContinuations = (command: string): string | undefined =>
  /\\\n/.test(command) ? command.replace(/\\\n/g, "") : undefined
