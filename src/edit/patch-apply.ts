/**
 * Applies the chunks of one `*** Update File` to a file's text (LF, BOM-less). Each chunk's old
 * lines (context and removed) are looked for after the previous chunk, first exactly, then
 * ignoring trailing whitespace, then ignoring indentation, then with typographic punctuation
 * read as ASCII. The first level that finds anything must find exactly one place: a chunk that
 * could go in two places is an error, never a guess. Context lines keep the file's bytes.
 */
import { nearestRegion } from "./near-miss.ts"
import type { Chunk } from "./patch-parse.ts"
import { fitQuotes, learnStyle } from "./quotes.ts"

const PUNCTUATION: ReadonlyArray<readonly [RegExp, string]> = [
  [/[\u2010-\u2015\u2212]/g, "-"],
  [/[\u2018\u2019\u201A\u201B]/g, "'"],
  [/[\u201C\u201D\u201E\u201F]/g, '"'],
  [/[\u00A0\u2002-\u200A\u202F\u205F\u3000]/g, " "]
]
const ascii = (s: string) => PUNCTUATION.reduce((t, [re, to]) => t.replace(re, to), s.trim())

const LEVELS: ReadonlyArray<(s: string) => string> = [(s) => s, (s) => s.trimEnd(), (s) => s.trim(), ascii]

export type ChunkResult =
  | { readonly ok: true; readonly text: string }
  | { readonly ok: false; readonly message: string }

/** Every index ≥ from where `want` matches `lines` under `norm`. */
const matchesFrom = (
  lines: ReadonlyArray<string>,
  want: ReadonlyArray<string>,
  from: number,
  norm: (s: string) => string,
  atEnd: boolean
): Array<number> => {
  const out: Array<number> = []
  const target = want.map(norm)
  const first = atEnd ? Math.max(from, lines.length - want.length) : from
  for (let i = first; i + want.length <= lines.length; i++) {
    let ok = true
    for (let k = 0; k < want.length && ok; k++) ok = norm(lines[i + k]!) === target[k]
    if (ok) out.push(i)
  }
  return out
}

/** The single place `want` matches from `from`, at the strictest level that finds any. */
const seek = (
  lines: ReadonlyArray<string>,
  want: ReadonlyArray<string>,
  from: number,
  atEnd: boolean
): { at: number; level: number } | { ambiguous: Array<number> } | undefined => {
  for (const [level, norm] of LEVELS.entries()) {
    const found = matchesFrom(lines, want, from, norm, atEnd)
    if (found.length === 1) return { at: found[0]!, level }
    if (found.length > 1) return { ambiguous: found }
  }
  return undefined
}

const list = (xs: ReadonlyArray<number>) => xs.map((x) => x + 1).join(", ")

export const applyChunks = (text: string, chunks: ReadonlyArray<Chunk>, shown: string): ChunkResult => {
  const trailingNewline = text.endsWith("\n")
  const lines = text === "" ? [] : (trailingNewline ? text.slice(0, -1) : text).split("\n")
  const edits: Array<{ at: number; remove: number; insert: Array<string> }> = []
  let cursor = 0
  for (const [n, chunk] of chunks.entries()) {
    const label = `${shown}, chunk ${n + 1}${chunk.header === undefined ? "" : ` (@@ ${chunk.header})`}`
    if (chunk.header !== undefined) {
      const h = seek(lines, [chunk.header], cursor, false)
      if (h === undefined) {
        return {
          ok: false,
          message: `${label}: the @@ line ${JSON.stringify(chunk.header)} is not in the file after line ${cursor}.`
        }
      }
      if ("ambiguous" in h) {
        return {
          ok: false,
          message: `${label}: the @@ line occurs at lines ${list(h.ambiguous)}; add context lines so the chunk fits one place.`
        }
      }
      cursor = h.at + 1
    }
    let old = chunk.lines.filter((l) => l.kind !== "+").map((l) => l.text)
    let body = chunk.lines
    if (old.length === 0) {
      // Pure addition: after the @@ line, or at the end of the file.
      edits.push({ at: chunk.header === undefined ? lines.length : cursor, remove: 0, insert: body.map((l) => l.text) })
      continue
    }
    let found = seek(lines, old, cursor, chunk.atEnd)
    // A blank context line at the end that the file does not have.
    if (found === undefined && old[old.length - 1] === "" && body[body.length - 1]?.kind === " ") {
      body = body.slice(0, -1)
      old = old.slice(0, -1)
      found = seek(lines, old, cursor, chunk.atEnd)
    }
    if (found === undefined) {
      const near = nearestRegion(lines, old.join("\n"), cursor)
      const hint =
        near === undefined ? "Nothing in the file resembles them; read the file and copy the lines." : near.text
      return {
        ok: false,
        message: `${label}: its context and removed lines were not found after line ${cursor}.\n${hint}`
      }
    }
    if ("ambiguous" in found) {
      return {
        ok: false,
        message: `${label}: its context and removed lines match at lines ${list(found.ambiguous)}; add context lines (or an @@ line) so it fits one place.`
      }
    }
    // Context lines keep the file's own bytes; added lines are the patch's, with their quotes
    // and dashes fitted to the file's when the match read typographic punctuation as ASCII
    // (quotes.ts): an added line takes the file's characters where it repeats the removed line
    // it replaces.
    const style =
      found.level === LEVELS.length - 1 ? learnStyle(old.map((o, j) => [o, lines[found.at + j]!] as const)) : undefined
    const insert: Array<string> = []
    let k = 0
    let removed: Array<number> = []
    for (const l of body) {
      if (l.kind === "+") {
        const r = removed.shift()
        insert.push(
          style === undefined
            ? l.text
            : fitQuotes(
                l.text,
                r === undefined ? undefined : old[r],
                r === undefined ? undefined : lines[found.at + r],
                style
              )
        )
      } else {
        if (l.kind === " ") {
          insert.push(lines[found.at + k]!)
          removed = []
        } else removed.push(k)
        k++
      }
    }
    edits.push({ at: found.at, remove: old.length, insert })
    cursor = found.at + old.length
  }
  const out = [...lines]
  for (const e of [...edits].sort((a, b) => b.at - a.at)) out.splice(e.at, e.remove, ...e.insert)
  const joined = out.join("\n")
  return { ok: true, text: out.length === 0 ? "" : trailingNewline || lines.length === 0 ? `${joined}\n` : joined }
}
