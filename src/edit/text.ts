/**
 * A text file as the edit tools see it: the BOM and the line-ending convention are taken off
 * when the file is read and put back when it is written, so matching works on plain LF text
 * and the bytes of lines nobody edited never change.
 */

export type LineEnding = "\n" | "\r\n"

export interface TextFile {
  /** The content with the BOM removed and, for a CRLF file, CRLF turned into LF. */
  readonly text: string
  readonly bom: boolean
  /** "\r\n" only when every line break of the file is CRLF; a mixed file is kept as it is. */
  readonly eol: LineEnding
}

const BOM = "\uFEFF"
// ignoreBOM keeps the BOM in the decoded text (the default drops it, and a write would lose it).
const decoder = new TextDecoder("utf-8", { ignoreBOM: true })
const encoder = new TextEncoder()

/** True when the bytes contain a NUL in their first 8 KB: not a text file. */
export const looksBinary = (bytes: Uint8Array): boolean => bytes.subarray(0, 8192).includes(0)

export const decodeText = (bytes: Uint8Array): TextFile => {
  let raw = decoder.decode(bytes)
  const bom = raw.startsWith(BOM)
  if (bom) raw = raw.slice(1)
  const crlf = (raw.match(/\r\n/g) ?? []).length
  const lf = (raw.match(/\n/g) ?? []).length
  // Only a file that is CRLF throughout is normalised: converting back then restores every byte.
  if (crlf > 0 && crlf === lf) return { text: raw.replace(/\r\n/g, "\n"), bom, eol: "\r\n" }
  return { text: raw, bom, eol: "\n" }
}

export const encodeText = (file: TextFile): Uint8Array => {
  const body = file.eol === "\r\n" ? file.text.replace(/\r?\n/g, "\r\n") : file.text
  return encoder.encode(file.bom ? BOM + body : body)
}

/** What the model sent, in the same form: CRLF turned into LF, a leading BOM dropped. */
export const normalizeInput = (s: string): string => (s.startsWith(BOM) ? s.slice(1) : s).replace(/\r\n/g, "\n")

/** The 1-based line number of a character offset. */
export const lineOf = (text: string, offset: number): number => {
  let line = 1
  for (let i = text.indexOf("\n"); i >= 0 && i < offset; i = text.indexOf("\n", i + 1)) line++
  return line
}

/** The leading whitespace of a line. */
export const indentOf = (line: string): string => /^[ \t]*/.exec(line)![0]

export const isBlank = (line: string): boolean => line.trim() === ""
