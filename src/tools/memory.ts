/**
 * `memory`: a persistent folder of notes per project, under a virtual `/memories` root, with the
 * commands of the memory tool model providers train on (view, create, str_replace, insert,
 * delete, rename). Every path is contained: only `/memories/...`, no `..`, and no symlink
 * anywhere on the way, so nothing outside the folder is ever read or written.
 */
import * as NodePath from "node:path"
import { Effect, FileSystem, type PlatformError, Schema } from "effect"
import { writeFileAtomic } from "../edit/atomic-write.ts"
import { MemoryFolder } from "../session/memory-folder.ts"
import { plural } from "../text/plural.ts"
import { fail, type ToolFailure } from "../tool/errors.ts"
import { readableError } from "../tool/readable-error.ts"
import { defineTool } from "../tool/tool.ts"

const ROOT = "/memories"
const MAX_FILE_BYTES = 1024 * 1024

const Parameters = Schema.Struct({
  command: Schema.Literals(["view", "create", "str_replace", "insert", "delete", "rename"]),
  path: Schema.optionalKey(
    Schema.String.annotate({ description: "A path under /memories (all commands but rename)." })
  ),
  view_range: Schema.optionalKey(
    Schema.Array(Schema.Int).annotate({ description: "view of a file: [first, last] line, 1-based; last -1 = end." })
  ),
  file_text: Schema.optionalKey(Schema.String.annotate({ description: "create: the whole file." })),
  old_str: Schema.optionalKey(Schema.String.annotate({ description: "str_replace: text that occurs exactly once." })),
  new_str: Schema.optionalKey(Schema.String.annotate({ description: "str_replace: its replacement." })),
  insert_line: Schema.optionalKey(
    Schema.Int.annotate({ description: "insert: the line to insert after (0 = at the top)." })
  ),
  insert_text: Schema.optionalKey(Schema.String.annotate({ description: "insert: the text to insert." })),
  old_path: Schema.optionalKey(Schema.String.annotate({ description: "rename: the path to move." })),
  new_path: Schema.optionalKey(Schema.String.annotate({ description: "rename: where it goes." }))
})
type Args = typeof Parameters.Type

/** A checked memory path: where it really is, and how the model writes it. */
interface Target {
  readonly abs: string
  readonly shown: string
}

/**
 * Maps `/memories/a/b` into the folder, refusing anything that could lead out of it: another
 * root, `..`, a NUL, or a symlink on any existing component.
 */
const locate = (fs: FileSystem.FileSystem, dir: string, given: string | undefined, name = "path") =>
  Effect.gen(function* (): Effect.fn.Return<Target, ToolFailure> {
    if (given === undefined) return yield* fail(`This command needs ${name}: a path under ${ROOT}.`)
    const trimmed = given.trim().replace(/\/+$/, "")
    if (trimmed !== ROOT && !trimmed.startsWith(`${ROOT}/`)) {
      return yield* fail(
        `${JSON.stringify(given)} is outside memory: every path starts with ${ROOT}/, e.g. ${ROOT}/notes.md.`
      )
    }
    const segments = trimmed
      .slice(ROOT.length)
      .split("/")
      .filter((s) => s !== "" && s !== ".")
    if (segments.some((s) => s === ".." || s.includes("\0") || s.includes("\\"))) {
      return yield* fail(`${JSON.stringify(given)} is refused: memory paths may not contain "..", backslashes or NUL.`)
    }
    let at = dir
    for (const segment of segments) {
      at = NodePath.join(at, segment)
      const info = yield* fs.lstat(at).pipe(Effect.option)
      if (info._tag === "None") break
      if (info.value.type === "SymbolicLink") {
        return yield* fail(`${JSON.stringify(given)} goes through a symbolic link; memory paths may not.`)
      }
    }
    return { abs: NodePath.join(dir, ...segments), shown: [ROOT, ...segments].join("/") }
  })

/**
 * A folder's entries two levels deep, hidden ones left out. Walked with lstat, never through a
 * symlink (a recursive readdir follows them): a link is listed as one, its target never looked at.
 */
const listTwoLevels = Effect.fnUntraced(function* (fs: FileSystem.FileSystem, folder: Target) {
  const lines: Array<string> = []
  const walk = (abs: string, shown: string, depth: number): Effect.Effect<void, PlatformError.PlatformError> =>
    Effect.gen(function* () {
      const names = (yield* fs.readDirectory(abs)).filter((n) => !n.startsWith(".")).sort()
      for (const name of names) {
        const info = yield* fs.lstat(NodePath.join(abs, name)).pipe(Effect.option)
        if (info._tag === "None") continue
        const path = `${shown}/${name}`
        if (info.value.type === "SymbolicLink") lines.push(`${path}\t(symbolic link, not followed)`)
        else if (info.value.type !== "Directory") lines.push(`${path}\t${Number(info.value.size)} bytes`)
        else {
          lines.push(`${path}/`)
          if (depth < 2) yield* walk(NodePath.join(abs, name), path, depth + 1)
        }
      }
    })
  yield* walk(folder.abs, folder.shown, 1)
  return lines
})

const numbered = (lines: ReadonlyArray<string>, first: number) =>
  lines.map((line, i) => `${String(first + i).padStart(6)}\t${line}`).join("\n")

export const MemoryTool = defineTool({
  id: "memory",
  description:
    "Your persistent memory for this project, kept across sessions: files under /memories. Commands: view (a folder or file), create, str_replace, insert, delete, rename. View /memories at the start of a task; record progress and lessons as you go.",
  parameters: Parameters,
  permissions: { operations: ["session.write"] },
  interruptBehavior: "block",
  execute: (args: Args) =>
    Effect.gen(function* () {
      const fs = yield* FileSystem.FileSystem
      const { dir } = yield* MemoryFolder
      yield* fs
        .makeDirectory(dir, { recursive: true })
        .pipe(Effect.mapError((e) => fail(`Cannot create the memory folder ${dir}: ${readableError(e)}`)))
      const io = (what: string) => (e: unknown) => fail(`Cannot ${what}: ${readableError(e)}`)
      const kind = (abs: string) =>
        fs.stat(abs).pipe(
          Effect.map((s) => s.type),
          Effect.option
        )
      const readText = Effect.fnUntraced(function* (t: Target) {
        const type = yield* kind(t.abs)
        if (type._tag === "None") return yield* fail(`${t.shown} does not exist; view ${ROOT} to see what does.`)
        if (type.value !== "File") return yield* fail(`${t.shown} is a directory; give a file path.`)
        return yield* fs.readFileString(t.abs).pipe(Effect.mapError(io(`read ${t.shown}`)))
      })
      const writeText = Effect.fnUntraced(function* (t: Target, text: string) {
        if (Buffer.byteLength(text) > MAX_FILE_BYTES) {
          return yield* fail(`A memory file may hold at most ${MAX_FILE_BYTES} bytes; split it or keep it shorter.`)
        }
        yield* fs
          .makeDirectory(NodePath.dirname(t.abs), { recursive: true })
          .pipe(Effect.mapError(io(`write ${t.shown}`)))
        yield* writeFileAtomic(t.abs, new TextEncoder().encode(text)).pipe(Effect.mapError(io(`write ${t.shown}`)))
      })
      const done = (title: string, output: string) => ({ title, output })

      switch (args.command) {
        case "view": {
          const t = yield* locate(fs, dir, args.path ?? ROOT)
          const type = yield* kind(t.abs)
          if (type._tag === "None") return yield* fail(`${t.shown} does not exist; view ${ROOT} to see what does.`)
          if (type.value === "Directory") {
            const lines = yield* listTwoLevels(fs, t).pipe(Effect.mapError(io(`list ${t.shown}`)))
            if (lines.length === 0) return done(`view ${t.shown}`, `${t.shown} is empty.`)
            return done(`view ${t.shown}`, [`${t.shown}/ (two levels):`, ...lines].join("\n"))
          }
          const lines = (yield* readText(t)).split("\n")
          if (lines.at(-1) === "") lines.pop()
          const range = args.view_range
          if (range === undefined)
            return done(`view ${t.shown}`, lines.length === 0 ? `${t.shown} is empty.` : numbered(lines, 1))
          const [first, last] = range
          const end = last === -1 ? lines.length : last
          if (
            range.length !== 2 ||
            first === undefined ||
            end === undefined ||
            first < 1 ||
            end < first ||
            first > lines.length
          ) {
            return yield* fail(
              `view_range must be [first, last] with 1 <= first <= last (or last -1); ${t.shown} has ${plural(lines.length, "line")}.`
            )
          }
          return done(`view ${t.shown}`, numbered(lines.slice(first - 1, end), first))
        }
        case "create": {
          const t = yield* locate(fs, dir, args.path)
          if (t.abs === dir) return yield* fail(`Give a file path under ${ROOT}, e.g. ${ROOT}/notes.md.`)
          if (args.file_text === undefined) return yield* fail("create needs file_text: the whole file.")
          const type = yield* kind(t.abs)
          if (type._tag === "Some" && type.value !== "File") return yield* fail(`${t.shown} is a directory.`)
          yield* writeText(t, args.file_text)
          return done(`create ${t.shown}`, `${type._tag === "Some" ? "Overwrote" : "Created"} ${t.shown}.`)
        }
        case "str_replace": {
          const t = yield* locate(fs, dir, args.path)
          if (args.old_str === undefined || args.old_str === "")
            return yield* fail("str_replace needs old_str: text that occurs exactly once.")
          const text = yield* readText(t)
          const count = text.split(args.old_str).length - 1
          if (count === 0)
            return yield* fail(`old_str does not occur in ${t.shown}; view it and copy the text exactly.`)
          if (count > 1)
            return yield* fail(
              `old_str occurs ${count} times in ${t.shown}; include more surrounding text so it occurs once.`
            )
          yield* writeText(
            t,
            text.replace(args.old_str, () => args.new_str ?? "")
          )
          return done(`str_replace ${t.shown}`, `Edited ${t.shown}.`)
        }
        case "insert": {
          const t = yield* locate(fs, dir, args.path)
          if (args.insert_line === undefined || args.insert_text === undefined) {
            return yield* fail("insert needs insert_line (0 = at the top) and insert_text.")
          }
          const text = yield* readText(t)
          const lines = text.split("\n")
          const trailing = lines.at(-1) === ""
          if (trailing) lines.pop()
          if (args.insert_line < 0 || args.insert_line > lines.length) {
            return yield* fail(`insert_line must be between 0 and ${lines.length} (the lines in ${t.shown}).`)
          }
          const added = args.insert_text.replace(/\n$/, "").split("\n")
          lines.splice(args.insert_line, 0, ...added)
          yield* writeText(t, lines.join("\n") + (trailing || text === "" ? "\n" : ""))
          return done(
            `insert ${t.shown}`,
            `Inserted ${added.length} line(s) after line ${args.insert_line} of ${t.shown}.`
          )
        }
        case "delete": {
          const t = yield* locate(fs, dir, args.path)
          if (t.abs === dir) return yield* fail(`${ROOT} itself cannot be deleted; delete the files in it.`)
          if ((yield* kind(t.abs))._tag === "None") return yield* fail(`${t.shown} does not exist.`)
          yield* fs.remove(t.abs, { recursive: true }).pipe(Effect.mapError(io(`delete ${t.shown}`)))
          return done(`delete ${t.shown}`, `Deleted ${t.shown}.`)
        }
        case "rename": {
          const from = yield* locate(fs, dir, args.old_path, "old_path")
          const to = yield* locate(fs, dir, args.new_path, "new_path")
          if (from.abs === dir || to.abs === dir) return yield* fail(`${ROOT} itself cannot be renamed.`)
          if ((yield* kind(from.abs))._tag === "None") return yield* fail(`${from.shown} does not exist.`)
          if ((yield* kind(to.abs))._tag === "Some")
            return yield* fail(`${to.shown} already exists; delete it first or pick another name.`)
          if (to.abs.startsWith(`${from.abs}/`)) return yield* fail(`${to.shown} is inside ${from.shown}.`)
          yield* fs
            .makeDirectory(NodePath.dirname(to.abs), { recursive: true })
            .pipe(Effect.mapError(io(`rename to ${to.shown}`)))
          yield* fs.rename(from.abs, to.abs).pipe(Effect.mapError(io(`rename ${from.shown}`)))
          return done(`rename ${from.shown}`, `Renamed ${from.shown} to ${to.shown}.`)
        }
      }
    })
})
