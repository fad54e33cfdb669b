/**
 * The contents side of the warm index: which files a grep pattern can match (grams.ts), kept as
 * fresh as the file list. The file list's events drive it: a directory read again is queued to
 * have its files (re)indexed, and a file an event names, or one below a directory forgotten,
 * loses its filter at once, so it is searched directly until it is indexed again. Files are read
 * in slices of a few milliseconds under the index's lock (warm-index.ts), so that no search sees
 * a filter made from text older than the events it has applied.
 *
 * Not indexed, and so always searched: files over MAX_TEXT, files with more than one hard link
 * (a write through another link, outside the watched tree, raises no event here), and files
 * that cannot be read. Binary files (a NUL byte, as grep decides) are never searched.
 */
import * as NFS from "node:fs"
import { performance } from "node:perf_hooks"
import type { GramQuery } from "./grams.ts"
import { GramStore, MAX_TEXT } from "./grams.ts"

export interface ContentIndexOptions {
  /** Most bytes the filters may take; past it the n-gram part is dropped and grep walks. */
  readonly maxBytes: number
}

const decoder = new TextDecoder("utf-8")
const OPEN_FLAGS = NFS.constants.O_RDONLY | NFS.constants.O_NOFOLLOW | NFS.constants.O_NONBLOCK

type Read = { readonly binary: true } | { readonly binary: false; readonly text: string } | undefined

/** The file's bytes as grep reads them, when it is a regular file with one link and small enough. */
const readForIndex = (path: string): Read => {
  let fd: number | undefined
  try {
    fd = NFS.openSync(path, OPEN_FLAGS)
    const st = NFS.fstatSync(fd)
    if (!st.isFile() || st.nlink > 1 || st.size > MAX_TEXT) return undefined
    const buffer = Buffer.allocUnsafe(st.size + 1)
    let at = 0
    for (;;) {
      const n = NFS.readSync(fd, buffer, at, buffer.length - at, at)
      if (n === 0) break
      at += n
      // Grew while read: not indexed now; its event will queue it again.
      if (at > st.size) return undefined
    }
    const bytes = buffer.subarray(0, at)
    if (bytes.includes(0)) return { binary: true }
    return { binary: false, text: decoder.decode(bytes) }
  } catch {
    return undefined
  } finally {
    if (fd !== undefined) NFS.closeSync(fd)
  }
}

export class ContentIndex {
  private readonly store = new GramStore()
  /** Directories whose files may lack a filter, in the order they came. */
  private dirty = new Set<string>()
  private complete = false
  private dropped = false
  private readonly maxBytes: number

  constructor(options: ContentIndexOptions) {
    this.maxBytes = options.maxBytes
    this.dropped = options.maxBytes <= 0
  }

  /** Every file of the first build was tried, and the budget holds. */
  ready(): boolean {
    return this.complete && !this.dropped
  }

  /** Past the budget (or turned off): grep walks. */
  off(): boolean {
    return this.dropped
  }

  hasWork(): boolean {
    return !this.dropped && this.dirty.size > 0
  }

  bytes(): number {
    return this.dropped ? 0 : this.store.bytes()
  }

  indexed(): number {
    return this.store.files()
  }

  /** A directory was read (again): its files without a filter are to be indexed. */
  dirRead(dir: string): void {
    if (!this.dropped) this.dirty.add(dir)
  }

  /** The file changed, went, or lies below a directory that went: searched directly from now on. */
  fileChanged(path: string): void {
    this.store.remove(path)
  }

  /** The file list was dropped: so is everything here (the next build starts again). */
  reset(): void {
    this.store.clear()
    this.dirty = new Set()
    this.complete = false
  }

  /**
   * Indexes the files of queued directories for about `ms` milliseconds. `filesOf` gives a
   * directory's files as the index holds them now (undefined when it is no longer held).
   * True when the queue is empty.
   */
  work(filesOf: (dir: string) => ReadonlyArray<string> | undefined, ms: number): boolean {
    if (this.dropped) return true
    const until = performance.now() + ms
    for (const dir of this.dirty) {
      const files = filesOf(dir)
      for (const file of files ?? []) {
        if (this.store.get(file) !== undefined) continue
        const read = readForIndex(file)
        if (read === undefined) this.store.setUnknown(file)
        else if (read.binary) this.store.setBinary(file)
        else this.store.setText(file, read.text)
        if (this.store.bytes() > this.maxBytes) {
          this.dropped = true
          this.store.clear()
          this.dirty = new Set()
          return true
        }
        // Out of time: this directory stays queued (its indexed files are skipped next time).
        if (performance.now() > until) return false
      }
      this.dirty.delete(dir)
    }
    this.complete = true
    return true
  }

  /** The files of `files` that may match `query`: not ruled out by their filter (or without one). */
  candidates(files: ReadonlyArray<string>, query: GramQuery): Array<string> {
    const test = this.store.compile(query)
    return files.filter((f) => test(this.store.get(f)))
  }
}
