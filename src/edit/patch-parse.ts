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
 * Forgiving where a model commonly slips and nothing can be misread: a heredoc wrapper, trailing
 * spaces after markers, a missing `*** End Patch`, a blank context line whose space was dropped.
 * Strict where a slip would change what is applied: a line is read by its first character (a
 * context line may hold `*** End Patch`), and any other text before or after the envelope — a
 * second envelope included — is a syntax error naming the line.
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

/**
 * A marker's argument when `line` is that marker. Markers begin the line; trailing spaces are
 * forgiven, and leading ones only where no context line can stand (`context` false): inside an
 * update, a line that begins with a space is context whatever it holds (` *** End Patch`, a C
 * comment `  *** Section ***`), as the grammar reads a line by its first character.
 */
const markerArg = (line: string, name: string, context: boolean): string | undefined => {
  const t = context ? line.trimEnd() : line.trim()
  const prefix = `*** ${name}:`
  return t.startsWith(prefix) ? t.slice(prefix.length).trim() : undefined
}

const isMarker = (line: string, name: string, context: boolean): boolean =>
  (context ? line.trimEnd() : line.trim()) === `*** ${name}`

/** A file operation's marker, however indented: no file line reads like one (Codex reads them trimmed too). */
const FILE_MARKER = /^\s*\*\*\* (Add|Update|Delete) File: /

/** Any `*** ` marker at the start of the line: ends an added file's or an update's lines. */
const startsMarker = (line: string, context: boolean): boolean =>
  (context ? line : line.trimStart()).startsWith("*** ") || FILE_MARKER.test(line)

/** `apply_patch <<'EOF'`, `cat <<-PATCH`: the word that closes the heredoc, when the line opens one. */
const heredocWord = (line: string): string | undefined => /<<-?\s*(['"]?)([A-Za-z_][\w-]*)\1\s*$/.exec(line)?.[2]

/** A path the file system would read differently from what the patch says. */
const checkPath = (path: string, at: string, what: string): string => {
  if (path === "") throw new PatchSyntaxError(`${at}: "*** ${what}:" needs a path.`)
  if (path.includes("\0")) {
    throw new PatchSyntaxError(`${at}: the path after "*** ${what}:" contains a NUL byte; remove it.`)
  }
  return path
}

export const parsePatch = (patchText: string): Array<PatchOp> => {
  const all = patchText.replace(/\r\n/g, "\n").split("\n")
  // Patch line n (1-based) is all[n - 1].
  const lineNo = (i: number) => `patch line ${i + 1}`
  const shownLine = (i: number) => JSON.stringify(all[i])
  let begin = 0
  while (begin < all.length && all[begin]!.trim() === "") begin++
  // Only a heredoc wrapper may come before the envelope (apply_patch <<'EOF' … EOF).
  let heredoc: string | undefined
  if (begin < all.length && all[begin]!.trim() !== "*** Begin Patch") {
    heredoc = heredocWord(all[begin]!)
    if (heredoc === undefined) {
      throw new PatchSyntaxError(
        `${lineNo(begin)}: the patch must start with "*** Begin Patch"; got ${shownLine(begin)}. Send only the patch (a heredoc wrapper is the one thing allowed around it).`
      )
    }
    begin++
    while (begin < all.length && all[begin]!.trim() === "") begin++
  }
  if (begin >= all.length || all[begin]!.trim() !== "*** Begin Patch") {
    throw new PatchSyntaxError('The patch must start with "*** Begin Patch".')
  }

  // The envelope's last line is read trimmed, as Codex reads it: "  *** End Patch " closes it
  // even where a line that begins with a space would otherwise be context.
  let last = all.length - 1
  while (last > begin && (all[last]!.trim() === "" || (heredoc !== undefined && all[last]!.trim() === heredoc))) last--
  if (last > begin && all[last]!.trim() === "*** End Patch") all[last] = "*** End Patch"

  // A heredoc's closing word where "*** End Patch" was left out ends the envelope too: no
  // added, context, removed or marker line can be a bare word.
  const closes = (l: string) => heredoc !== undefined && l.trim() === heredoc
  const ends = (l: string, context: boolean) => startsMarker(l, context) || closes(l)
  const ops: Array<PatchOp> = []
  let i = begin + 1
  let ended = false
  while (i < all.length && !ended) {
    const line = all[i]!
    if (isMarker(line, "End Patch", false) || closes(line)) {
      ended = true
      if (closes(line)) heredoc = undefined
      i++
      break
    }
    const add = markerArg(line, "Add File", false)
    const del = markerArg(line, "Delete File", false)
    const upd = markerArg(line, "Update File", false)
    if (add !== undefined) {
      const path = checkPath(add, lineNo(i), "Add File")
      i++
      const content: Array<string> = []
      while (i < all.length && !ends(all[i]!, false)) {
        const l = all[i]!
        if (!l.startsWith("+")) {
          // Blank lines before the next marker or the end are spacing, not content.
          let k = i
          while (k < all.length && all[k]!.trim() === "") k++
          if (l.trim() === "" && (k === all.length || ends(all[k]!, false))) {
            i = k
            break
          }
          throw new PatchSyntaxError(`${lineNo(i)}: every line of an added file starts with "+"; got ${shownLine(i)}.`)
        }
        content.push(l.slice(1))
        i++
      }
      ops.push({ type: "add", path, content: content.length === 0 ? "" : `${content.join("\n")}\n` })
    } else if (del !== undefined) {
      ops.push({ type: "delete", path: checkPath(del, lineNo(i), "Delete File") })
      i++
    } else if (upd !== undefined) {
      const path = checkPath(upd, lineNo(i), "Update File")
      const updLine = i
      i++
      let moveTo: string | undefined
      const move = i < all.length ? markerArg(all[i]!, "Move to", false) : undefined
      if (move !== undefined) {
        moveTo = checkPath(move, lineNo(i), "Move to")
        i++
      }
      const chunks: Array<Chunk> = []
      let current: { header: string | undefined; lines: Array<PatchLine>; atEnd: boolean } | undefined
      const close = () => {
        if (current !== undefined && current.lines.length > 0) chunks.push(current)
        else if (current !== undefined && current.header !== undefined) {
          throw new PatchSyntaxError(`${lineNo(i)}: the chunk "@@ ${current.header}" has no lines.`)
        }
        current = undefined
      }
      while (i < all.length) {
        const l = all[i]!
        if (isMarker(l, "End of File", false)) {
          if (current === undefined) throw new PatchSyntaxError(`${lineNo(i)}: "*** End of File" must follow a chunk.`)
          current.atEnd = true
          i++
          close()
          continue
        }
        if (ends(l, true)) break
        // An indented "@@" starts a chunk where no context line can be meant: first in the
        // update, or a bare "@@".
        const at =
          l.startsWith("@@") || ((current === undefined || l.trim() === "@@") && l.trimStart().startsWith("@@"))
        if (at) {
          close()
          const header = l.trimStart().slice(2).trim()
          current = {
            header: header === "" || header === "@@" ? undefined : header.replace(/\s*@@$/, ""),
            lines: [],
            atEnd: false
          }
          i++
          continue
        }
        const c = l[0]
        if (c === " " || c === "-" || c === "+") {
          current ??= { header: undefined, lines: [], atEnd: false }
          current.lines.push({ kind: c, text: l.slice(1) })
        } else if (l.trim() === "") {
          // A blank context line whose space was dropped, unless only blank lines are left
          // before a marker or the end (spacing between sections).
          let k = i
          while (k < all.length && all[k]!.trim() === "") k++
          if (k === all.length || ends(all[k]!, true)) {
            i = k
            break
          }
          current ??= { header: undefined, lines: [], atEnd: false }
          current.lines.push({ kind: " ", text: "" })
        } else {
          throw new PatchSyntaxError(
            `${lineNo(i)}: a line in an update starts with " " (context), "-" (remove) or "+" (add); got ${shownLine(i)}.`
          )
        }
        i++
      }
      close()
      if (chunks.length === 0 && moveTo === undefined) {
        throw new PatchSyntaxError(
          `${lineNo(updLine)}: "*** Update File: ${path}" has no changes; give at least one @@ chunk.`
        )
      }
      ops.push({ type: "update", path, moveTo, chunks })
    } else if (line.trim() === "") {
      i++
    } else if (line.trim() === "*** Begin Patch") {
      throw new PatchSyntaxError(`${lineNo(i)}: "*** Begin Patch" again before "*** End Patch"; send one envelope.`)
    } else {
      throw new PatchSyntaxError(
        `${lineNo(i)}: expected "*** Add File:", "*** Delete File:", "*** Update File:" or "*** End Patch", got ${shownLine(i)}.`
      )
    }
  }
  // After the envelope: blank lines, and the heredoc's closing word when it opened with one.
  for (; i < all.length; i++) {
    const t = all[i]!.trim()
    if (t === "") continue
    if (heredoc !== undefined && t === heredoc) {
      heredoc = undefined
      continue
    }
    if (t === "*** Begin Patch") {
      throw new PatchSyntaxError(
        `${lineNo(i)}: a second "*** Begin Patch" envelope; nothing was applied. Put every file's changes in one envelope.`
      )
    }
    throw new PatchSyntaxError(
      `${lineNo(i)}: text after "*** End Patch": ${shownLine(i)}. Send only the patch; nothing was applied.`
    )
  }
  if (ops.length === 0) throw new PatchSyntaxError("The patch has no file operations.")
  return ops
}
