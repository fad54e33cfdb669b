/**
 * What identifies a file's content: its size, a SHA-1 of its bytes, and one 32-bit hash per
 * line (FNV-style, a word at a time), so a stale-file check can say which lines changed
 * without keeping the text. Built incrementally, so `read` can fingerprint a file while it
 * streams it.
 */
import { createHash, type Hash, hash } from "node:crypto"

export interface Fingerprint {
  readonly size: number
  readonly hash: string
  /** One hash per line (a line's bytes up to its \n); absent for files with very many lines. */
  readonly lines: Uint32Array | undefined
}

/** Files with more lines than this get no per-line hashes (4 bytes a line would add up). */
const MAX_LINES = 200_000
/** FNV's offset basis and prime, as signed 32-bit ints: kept in int32 range, no number is boxed. */
const BASIS = 0x811c9dc5 | 0
const PRIME = 0x01000193
/** Each byte's top bit (0x80808080) as an int32, so the newline test stays in int32 arithmetic. */
const HIGH_BITS = 0x80808080 | 0
const EMPTY = new Uint8Array(0)

/** A line's hash from its state: the last, partial word and the line's length mixed in. */
const finish = (h: number, word: number, length: number): number =>
  Math.imul(Math.imul(h ^ word, PRIME) ^ length, PRIME)

export class Fingerprinter {
  /** Created at the second chunk: a file read whole is hashed in one call, without a Hash object. */
  private sha: Hash | undefined
  /** The only chunk so far, until a second arrives. */
  private first: Uint8Array | undefined
  private size = 0
  /** The current line: its hash so far, the bytes of its unfinished word, and its length. */
  private line = BASIS
  private word = 0
  private lineLength = 0
  private lineHashes: Array<number> | undefined = []

  update(bytes: Uint8Array): this {
    if (this.sha !== undefined) this.sha.update(bytes)
    else if (this.first === undefined) this.first = bytes
    else {
      this.sha = createHash("sha1").update(this.first).update(bytes)
      this.first = undefined
    }
    this.size += bytes.length
    const hashes = this.lineHashes
    if (hashes === undefined) return this
    // FNV-style over 4-byte words taken from each line's start, so a line hashes the same
    // however its bytes were split into chunks. A word with no newline in it (tested all four
    // bytes at once) is one step; bytes near a newline or a chunk's edge go one at a time.
    let h = this.line
    let word = this.word
    let length = this.lineLength
    const n = bytes.length
    let i = 0
    while (i < n) {
      if ((length & 3) === 0 && i + 4 <= n) {
        const v = bytes[i]! | (bytes[i + 1]! << 8) | (bytes[i + 2]! << 16) | (bytes[i + 3]! << 24)
        const x = v ^ 0x0a0a0a0a
        if (((x - 0x01010101) & ~x & HIGH_BITS) === 0) {
          h = Math.imul(h ^ v, PRIME)
          length += 4
          i += 4
          continue
        }
      }
      const b = bytes[i++]!
      if (b === 10) {
        hashes.push(finish(h, word, length))
        h = BASIS
        word = 0
        length = 0
        continue
      }
      word |= b << ((length & 3) << 3)
      length++
      if ((length & 3) === 0) {
        h = Math.imul(h ^ word, PRIME)
        word = 0
      }
    }
    this.line = h
    this.word = word
    this.lineLength = length
    if (hashes.length > MAX_LINES) this.lineHashes = undefined
    return this
  }

  digest(): Fingerprint {
    const hashes = this.lineHashes
    if (hashes !== undefined && this.lineLength > 0) hashes.push(finish(this.line, this.word, this.lineLength))
    return {
      size: this.size,
      hash: this.sha !== undefined ? this.sha.digest("hex") : hash("sha1", this.first ?? EMPTY, "hex"),
      // Uint32Array stores each signed hash as its unsigned 32-bit value.
      lines: hashes === undefined ? undefined : Uint32Array.from(hashes)
    }
  }
}

export const fingerprint = (bytes: Uint8Array): Fingerprint => new Fingerprinter().update(bytes).digest()

/**
 * Which lines differ between two fingerprints, as "lines 4-6 and 12" of the newer one, or
 * undefined when line hashes are missing.
 */
export const changedLines = (before: Fingerprint, after: Fingerprint): string | undefined => {
  const a = before.lines
  const b = after.lines
  if (a === undefined || b === undefined) return undefined
  let head = 0
  while (head < a.length && head < b.length && a[head] === b[head]) head++
  let tail = 0
  while (tail < a.length - head && tail < b.length - head && a[a.length - 1 - tail] === b[b.length - 1 - tail]) tail++
  const from = head + 1
  const to = b.length - tail
  const delta = b.length - a.length
  const grew =
    delta === 0
      ? ""
      : `; it is ${Math.abs(delta)} line${Math.abs(delta) === 1 ? "" : "s"} ${delta > 0 ? "longer" : "shorter"}`
  if (to < from) return `lines were removed after line ${head}${grew}`
  return `${from === to ? `line ${from}` : `lines ${from}-${to}`} changed${grew}`
}
