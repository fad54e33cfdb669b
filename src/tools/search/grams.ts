/**
 * The n-gram part of the warm index: for each text file, a Bloom filter of the trigrams of its
 * text (as grep's matcher decodes it, UTF-16 code units, folded by `foldUnit`), sized to the
 * file (~6 bits a distinct trigram, two probes: ~8% false positives per trigram, and a query
 * of several trigrams rarely lets a file through that lacks them). A filter never misses a
 * trigram the file has, so a file it rules out cannot match.
 *
 * The filters live in slabs of one size each (16 KiB typed arrays), not one typed array per
 * file: a typed array costs ~100 bytes of its own, more than most files' filters. Memory is
 * the slabs plus the path map, counted against a budget; past it the caller drops the store.
 */

/** What a file's trigrams must satisfy (literals.ts makes it from a pattern). */
export type GramQuery =
  | { readonly op: "all" }
  | { readonly op: "gram"; readonly gram: string }
  | { readonly op: "and"; readonly subs: ReadonlyArray<GramQuery> }
  | { readonly op: "or"; readonly subs: ReadonlyArray<GramQuery> }

/**
 * Folds a code unit the way both the index and the query see it: ASCII letters to lower case,
 * and the two non-ASCII letters whose case folding reaches ASCII (KELVIN SIGN → k, LONG S → s).
 * A case-insensitive match then needs only the folded trigram; other non-ASCII letters are left
 * as they are, and literals.ts does not ask for them under `-i`.
 */
export const foldUnit = (c: number): number =>
  c >= 65 && c <= 90 ? c + 32 : c === 0x212a ? 107 : c === 0x17f ? 115 : c

const mix = (a: number, b: number, c: number): number => {
  let h = Math.imul(a ^ 0x2545f491, 0x9e3779b1) ^ Math.imul(b ^ 0x6c8e9cf5, 0x85ebca77) ^ Math.imul(c, 0xc2b2ae3d)
  h ^= h >>> 15
  h = Math.imul(h, 0x2c1b3c6d)
  h ^= h >>> 12
  return h >>> 0
}

export const gramHash = (gram: string): number => mix(gram.charCodeAt(0), gram.charCodeAt(1), gram.charCodeAt(2))

/** Not indexed (too large, linked elsewhere, unreadable, changed): always searched. */
export const UNKNOWN = -1
/** Has a NUL byte: grep skips it, as the walk and rg do. */
export const BINARY = -2

const SLAB = 16 * 1024
const MAX_FILTER = 16 * 1024
const BITS_PER_GRAM = 6
/** Longer texts are not indexed (searched every time): their dedupe table would take 6 MB. */
export const MAX_TEXT = 512 * 1024
/** What a path in the map costs beside its filter (map slot, handle), for the budget. */
const PER_FILE = 40

/** Filter sizes: 16-byte steps to 1 KiB, then 256-byte steps to 16 KiB. */
const classOf = (bytes: number): number =>
  bytes <= 1024 ? Math.max(1, Math.ceil(bytes / 16)) - 1 : 63 + Math.ceil((Math.min(bytes, MAX_FILTER) - 1024) / 256)
const sizeOfClass = (k: number): number => (k < 64 ? (k + 1) * 16 : 1024 + (k - 63) * 256)

interface Slabs {
  readonly size: number
  readonly perSlab: number
  readonly slabs: Array<Uint8Array>
  readonly free: Array<number>
  next: number
}

/** A compiled query: true when the filter at (slab, offset, bits) may hold every trigram needed. */
type Test = (bytes: Uint8Array, at: number, bits: number) => boolean

const probe = (h: number, bytes: Uint8Array, at: number, bits: number): boolean => {
  const a = h % bits
  const b = Math.imul(h, 0x27d4eb2f) >>> 0
  const c = b % bits
  return (bytes[at + (a >>> 3)]! & (1 << (a & 7))) !== 0 && (bytes[at + (c >>> 3)]! & (1 << (c & 7))) !== 0
}

export class GramStore {
  private handles = new Map<string, number>()
  private classes: Array<Slabs | undefined> = []
  /** Files per trigram bucket, only ever counted up: which trigrams are rare, to test them first. */
  private readonly seen = new Uint32Array(1 << 16)
  private slabBytes = 0
  /** Dedupe table for one file's trigrams, reused. */
  private table = new Uint32Array(1 << 12)
  private stamp = new Uint16Array(1 << 12)
  private generation = 0

  /** Bytes held: slabs plus the per-file cost. */
  bytes(): number {
    return this.slabBytes + this.handles.size * PER_FILE + this.table.length * 6
  }

  files(): number {
    return this.handles.size
  }

  /** The file's handle: a filter, BINARY, or undefined (not indexed: always searched). */
  get(path: string): number | undefined {
    return this.handles.get(path)
  }

  setBinary(path: string): void {
    this.remove(path)
    this.handles.set(path, BINARY)
  }

  /** Not indexed, and not to be tried again until it changes: always searched. */
  setUnknown(path: string): void {
    this.remove(path)
    this.handles.set(path, UNKNOWN)
  }

  /** Indexes `text` (decoded as grep decodes it) for `path`; a text over MAX_TEXT is kept as unknown. */
  setText(path: string, text: string): void {
    if (text.length > MAX_TEXT) {
      this.setUnknown(path)
      return
    }
    this.remove(path)
    const hashes = this.distinct(text)
    const k = classOf(Math.ceil((hashes.length * BITS_PER_GRAM) / 8))
    const slot = this.alloc(k)
    const slabs = this.classes[k]!
    const bytes = slabs.slabs[Math.floor(slot / slabs.perSlab)]!
    const at = (slot % slabs.perSlab) * slabs.size
    const bits = slabs.size * 8
    for (const h of hashes) {
      const a = h % bits
      const c = (Math.imul(h, 0x27d4eb2f) >>> 0) % bits
      bytes[at + (a >>> 3)]! |= 1 << (a & 7)
      bytes[at + (c >>> 3)]! |= 1 << (c & 7)
      this.seen[h & 0xffff]!++
    }
    this.handles.set(path, slot * 128 + k)
  }

  remove(path: string): void {
    const handle = this.handles.get(path)
    if (handle === undefined) return
    this.handles.delete(path)
    if (handle < 0) return
    const k = handle % 128
    const slot = Math.floor(handle / 128)
    const slabs = this.classes[k]!
    slabs.slabs[Math.floor(slot / slabs.perSlab)]!.fill(
      0,
      (slot % slabs.perSlab) * slabs.size,
      (slot % slabs.perSlab) * slabs.size + slabs.size
    )
    slabs.free.push(slot)
  }

  clear(): void {
    this.handles = new Map()
    this.classes = []
    this.slabBytes = 0
  }

  /**
   * A test for `query` over handles: true when the file may match (not indexed, or its filter
   * holds the trigrams), false when it cannot (binary, or a trigram is missing).
   */
  compile(query: GramQuery): (handle: number | undefined) => boolean {
    const test = this.compileQuery(query)
    return (handle) => {
      if (handle === undefined || handle === UNKNOWN) return true
      if (handle === BINARY) return false
      const k = handle % 128
      const slot = Math.floor(handle / 128)
      const slabs = this.classes[k]!
      return test(slabs.slabs[Math.floor(slot / slabs.perSlab)]!, (slot % slabs.perSlab) * slabs.size, slabs.size * 8)
    }
  }

  private compileQuery(query: GramQuery): Test {
    switch (query.op) {
      case "all":
        return () => true
      case "gram": {
        const h = gramHash(query.gram)
        return (bytes, at, bits) => probe(h, bytes, at, bits)
      }
      case "and": {
        // Rarest first: most files fail at the first probe.
        const grams = query.subs
          .filter((q) => q.op === "gram")
          .map((q) => gramHash((q as { gram: string }).gram))
          .sort((a, b) => this.seen[a & 0xffff]! - this.seen[b & 0xffff]!)
        const rest = query.subs.filter((q) => q.op !== "gram").map((q) => this.compileQuery(q))
        return (bytes, at, bits) => {
          for (const h of grams) if (!probe(h, bytes, at, bits)) return false
          for (const t of rest) if (!t(bytes, at, bits)) return false
          return true
        }
      }
      case "or": {
        const subs = query.subs.map((q) => this.compileQuery(q))
        return (bytes, at, bits) => subs.some((t) => t(bytes, at, bits))
      }
    }
  }

  private alloc(k: number): number {
    let slabs = this.classes[k]
    if (slabs === undefined) {
      const size = sizeOfClass(k)
      slabs = { size, perSlab: Math.max(1, Math.floor(SLAB / size)), slabs: [], free: [], next: 0 }
      this.classes[k] = slabs
    }
    const reused = slabs.free.pop()
    if (reused !== undefined) return reused
    const slot = slabs.next++
    if (Math.floor(slot / slabs.perSlab) >= slabs.slabs.length) {
      const bytes = Math.max(SLAB, slabs.size)
      slabs.slabs.push(new Uint8Array(bytes))
      this.slabBytes += bytes
    }
    return slot
  }

  /** The distinct trigram hashes of `text`, folded. */
  private distinct(text: string): Array<number> {
    const out: Array<number> = []
    if (text.length < 3) return out
    let cap = this.table.length
    while (cap < text.length * 2) cap *= 2
    if (cap !== this.table.length) {
      this.table = new Uint32Array(cap)
      this.stamp = new Uint16Array(cap)
      this.generation = 0
    }
    if (++this.generation === 0x10000) {
      this.stamp.fill(0)
      this.generation = 1
    }
    const mask = cap - 1
    const gen = this.generation
    let a = foldUnit(text.charCodeAt(0))
    let b = foldUnit(text.charCodeAt(1))
    for (let k = 2; k < text.length; k++) {
      const c = foldUnit(text.charCodeAt(k))
      const h = mix(a, b, c)
      let slot = h & mask
      for (;;) {
        if (this.stamp[slot] !== gen) {
          this.stamp[slot] = gen
          this.table[slot] = h
          out.push(h)
          break
        }
        if (this.table[slot] === h) break
        slot = (slot + 1) & mask
      }
      a = b
      b = c
    }
    return out
  }
}
