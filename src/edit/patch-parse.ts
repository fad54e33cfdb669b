/**
 * Parses the `*** Begin Patch` envelope (the format many coding models are trained on):
 *
 *   *** Begin Patch
 *   *** Add File: path          then every line starts with +
 *   *** Delete File: path
 *   *** Update File: path
 *   *** Move to: new/path       optional, right after Update File
 *   @@ optional context line    starts a chunk; then lines starting with " ", - or +
 *   *** End of File             optional: the chunk ends at the end of the file
 *   *** End Patch
 *
 * Forgiving where a model commonly slips and nothing can be misread: a heredoc wrapper, spaces
 * around markers, a missing `*** End Patch`, a context line whose leading space was dropped.
 */

export type PatchLine = { readonly kind: " " | "-" | "+"; readonly text: string }

export interface Chunk {
  /** The text after `@@`: a line to find first (a function header), when given. */
  readonly header: string | undefined
  readonly lines: ReadonlyArray<PatchLine>
  /** `*** End of File` followed: the old lines end the file. */
  readonly atEnd: boolean
}

export type PatchOp =
  | { readonly type: "add"; readonly path: string; readonly content: string }
  | { readonly type: "delete"; readonly path: string }
  | {
      readonly type: "update"
      readonly path: string
      readonly moveTo: string | undefined
      readonly chunks: ReadonlyArray<Chunk>
    }

export class PatchSyntaxError extends Error {}

const marker = (line: string, name: string): string | undefined => {
  const t = line.trim()
  const prefix = `*** ${name}:`
  return t.startsWith(prefix) ? t.slice(prefix.length).trim() : undefined
}

export const parsePatch = (patchText: string): Array<PatchOp> => {
  let lines = patchText.replace(/\r\n/g, "\n").split("\n")
  // A heredoc wrapper (apply_patch <<'EOF' … EOF) around the envelope.
  const begin = lines.findIndex((l) => l.trim() === "*** Begin Patch")
  if (begin < 0) throw new PatchSyntaxError('The patch must start with "*** Begin Patch".')
  lines = lines.slice(begin + 1)
  const end = lines.findIndex((l) => l.trim() === "*** End Patch")
  if (end >= 0) lines = lines.slice(0, end)
  while (lines.length > 0 && lines[lines.length - 1]!.trim() === "") lines.pop()

  const ops: Array<PatchOp> = []
  let i = 0
  const where = () => `patch line ${begin + 2 + i}`
  while (i < lines.length) {
    const line = lines[i]!
    const add = marker(line, "Add File")
    const del = marker(line, "Delete File")
    const upd = marker(line, "Update File")
    if (add !== undefined) {
      if (add === "") throw new PatchSyntaxError(`${where()}: "*** Add File:" needs a path.`)
      i++
      const content: Array<string> = []
      while (i < lines.length && !lines[i]!.trim().startsWith("*** ")) {
        const l = lines[i]!
        if (!l.startsWith("+")) {
          throw new PatchSyntaxError(
            `${where()}: every line of an added file starts with "+"; got ${JSON.stringify(l)}.`
          )
        }
        content.push(l.slice(1))
        i++
      }
      ops.push({ type: "add", path: add, content: content.length === 0 ? "" : `${content.join("\n")}\n` })
    } else if (del !== undefined) {
      if (del === "") throw new PatchSyntaxError(`${where()}: "*** Delete File:" needs a path.`)
      ops.push({ type: "delete", path: del })
      i++
    } else if (upd !== undefined) {
      if (upd === "") throw new PatchSyntaxError(`${where()}: "*** Update File:" needs a path.`)
      i++
      let moveTo: string | undefined
      const move = i < lines.length ? marker(lines[i]!, "Move to") : undefined
      if (move !== undefined) {
        moveTo = move
        i++
      }
      const chunks: Array<Chunk> = []
      let current: { header: string | undefined; lines: Array<PatchLine>; atEnd: boolean } | undefined
      const close = () => {
        if (current !== undefined && current.lines.length > 0) chunks.push(current)
        else if (current !== undefined && current.header !== undefined) {
          throw new PatchSyntaxError(`${where()}: the chunk "@@ ${current.header}" has no lines.`)
        }
        current = undefined
      }
      while (i < lines.length) {
        const l = lines[i]!
        if (l.trim() === "*** End of File") {
          if (current === undefined) throw new PatchSyntaxError(`${where()}: "*** End of File" must follow a chunk.`)
          current.atEnd = true
          i++
          close()
          continue
        }
        if (l.trim().startsWith("*** ")) break
        if (l.startsWith("@@")) {
          close()
          const header = l.slice(2).trim()
          current = {
            header: header === "" || header === "@@" ? undefined : header.replace(/\s*@@$/, ""),
            lines: [],
            atEnd: false
          }
          i++
          continue
        }
        current ??= { header: undefined, lines: [], atEnd: false }
        const c = l[0]
        if (c === " " || c === "-" || c === "+") current.lines.push({ kind: c, text: l.slice(1) })
        else if (l.trim() === "") current.lines.push({ kind: " ", text: "" })
        else {
          throw new PatchSyntaxError(
            `${where()}: a line in an update starts with " " (context), "-" (remove) or "+" (add); got ${JSON.stringify(l)}.`
          )
        }
        i++
      }
      close()
      if (chunks.length === 0 && moveTo === undefined) {
        throw new PatchSyntaxError(`"*** Update File: ${upd}" has no changes; give at least one @@ chunk.`)
      }
      ops.push({ type: "update", path: upd, moveTo, chunks })
    } else if (line.trim() === "") {
      i++
    } else {
      throw new PatchSyntaxError(
        `${where()}: expected "*** Add File:", "*** Delete File:" or "*** Update File:", got ${JSON.stringify(line)}.`
      )
    }
  }
  if (ops.length === 0) throw new PatchSyntaxError("The patch has no file operations.")
  return ops
}
