/**
 * Context lines from rg's output, given to the matches they surround. rg prints each line once
 * (`N:` a match, `N-` context), one file's lines together and in order; the walk gives each
 * match the non-matching lines within `before` above and `after` below it. This gives each
 * match the same lines, so a page that shows only some of a file's matches shows the same
 * context from both backends.
 */
import type { ContextLine, GrepMatch } from "./backend.ts"

export class ContextTracker {
  private path = ""
  /** The file's latest context lines, at most `before` of them. */
  private recent: Array<ContextLine> = []
  /** The file's matches whose `after` window is still open. */
  private open: Array<{ readonly line: number; readonly after: Array<ContextLine> }> = []
  private readonly before: number
  private readonly after: number

  constructor(before: number, after: number) {
    this.before = before
    this.after = after
  }

  private enter(path: string): void {
    if (path === this.path) return
    this.path = path
    this.recent = []
    this.open = []
  }

  /** A matching line: the match to collect, with the context lines seen so far. */
  match(path: string, line: number, text: string): GrepMatch {
    if (this.before === 0 && this.after === 0) return { path, line, text }
    this.enter(path)
    const before = this.before > 0 ? this.recent.filter((c) => c.line >= line - this.before) : undefined
    const after = this.after > 0 ? [] : undefined
    if (after !== undefined) this.open.push({ line, after })
    return { path, line, text, ...(before === undefined ? {} : { before }), ...(after === undefined ? {} : { after }) }
  }

  /** A context line: added to every open match it follows closely enough, kept for the next ones. */
  context(path: string, line: number, text: string): void {
    this.enter(path)
    const c = { line, text }
    if (this.open.length > 0) {
      this.open = this.open.filter((m) => line <= m.line + this.after)
      for (const m of this.open) m.after.push(c)
    }
    if (this.before > 0) {
      this.recent.push(c)
      if (this.recent.length > this.before) this.recent.shift()
    }
  }
}
