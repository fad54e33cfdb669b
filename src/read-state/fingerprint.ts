/**
 * What identifies a file's content: its size, a SHA-1 of its bytes, and one 32-bit hash per
 * line (FNV-1a), so a stale-file check can say which lines changed without keeping the text.
 * Built incrementally, so `read` can fingerprint a file while it streams it.
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
/** FNV-1a's offset basis, as a signed 32-bit int: kept in int32 range, the loop never boxes a number. */
const FNV_BASIS = 0x811c9dc5 | 0
const EMPTY = new Uint8Array(0)

export class Fingerprinter {
  /** Created at the second chunk: a file read whole is hashed in one call, without a Hash object. */
  private sha: Hash | undefined
  /** The only chunk so far, until a second arrives. */
  private first: Uint8Array | undefined
  private size = 0
  private line = FNV_BASIS
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
    // Line ends found natively; the inner loop hashes a line's bytes with no branch.
    let h = this.line
    let start = 0
    const n = bytes.length
    for (;;) {
      const nl = bytes.indexOf(10, start)
      const end = nl < 0 ? n : nl
      for (let i = start; i < end; i++) h = Math.imul(h ^ bytes[i]!, 0x01000193)
      if (nl < 0) break
      hashes.push(h)
      h = FNV_BASIS
      start = nl + 1
    }
    this.line = h
    if (hashes.length > MAX_LINES) this.lineHashes = undefined
    return this
  }

  digest(): Fingerprint {
    const hashes = this.lineHashes
    if (hashes !== undefined && this.line !== FNV_BASIS) hashes.push(this.line)
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
