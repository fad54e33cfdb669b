/** A file's LF text split into lines, with each line's start offset: what the replacers search. */

export interface Span {
  readonly start: number
  readonly end: number
}

/** The file split into lines with each line's start offset, computed when first needed. */
export class Lines {
  readonly text: string
  private split: { lines: Array<string>; starts: Array<number>; trimmed: Array<string> } | undefined
  constructor(text: string) {
    this.text = text
  }

  private get parts() {
    if (this.split === undefined) {
      const lines = this.text.split("\n")
      const starts: Array<number> = []
      let at = 0
      for (const line of lines) {
        starts.push(at)
        at += line.length + 1
      }
      this.split = { lines, starts, trimmed: lines.map((l) => l.trim()) }
    }
    return this.split
  }

  get lines(): ReadonlyArray<string> {
    return this.parts.lines
  }

  get starts(): ReadonlyArray<number> {
    return this.parts.starts
  }

  get trimmed(): ReadonlyArray<string> {
    return this.parts.trimmed
  }

  /** The span of lines [first, last], plus the newline after `last` when `withNewline`. */
  span(first: number, last: number, withNewline: boolean): Span {
    const end = this.starts[last]! + this.lines[last]!.length
    return { start: this.starts[first]!, end: withNewline && last + 1 < this.lines.length ? end + 1 : end }
  }
}
