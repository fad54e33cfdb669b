import { describe, expect, it } from "@effect/vitest"
import { Effect, FileSystem } from "effect"
import { joinPath } from "../../src/path/path.ts"
import { ApplyPatchTool } from "../../src/tools/apply-patch.ts"
import { EditTool } from "../../src/tools/edit.ts"
import { ReadTool } from "../../src/tools/read.ts"
import { WriteTool } from "../../src/tools/write.ts"
import { run, runFailure } from "../tools/helpers.ts"
import { ctxFor, layer, project, readBytes, readText } from "./helpers.ts"

const dec = new TextDecoder("utf-8", { ignoreBOM: true })

describe("write", () => {
  it.live("creates a new file and its parent folders without a prior read", () =>
    Effect.gen(function* () {
      const root = yield* project()
      const out = yield* run(WriteTool, { filePath: "a/b/c.txt", content: "hello\nworld\n" }, ctxFor(root))
      expect(out.output).toBe("Created a/b/c.txt (2 lines, 12 bytes).")
      expect(out.metadata).toMatchObject({ created: true, additions: 2, deletions: 0 })
      expect(yield* readText(joinPath(root, "a/b/c.txt"))).toBe("hello\nworld\n")
    }).pipe(Effect.provide(layer))
  )

  it.live("refuses to replace an existing file the session has not read, and allows it after a read", () =>
    Effect.gen(function* () {
      const root = yield* project({ "f.txt": "theirs\n" })
      const refused = yield* runFailure(WriteTool, { filePath: "f.txt", content: "mine\n" }, ctxFor(root))
      expect(refused).toContain("f.txt already exists and has not been read in this session")
      expect(refused).toContain("Read it first")
      expect(yield* readText(joinPath(root, "f.txt"))).toBe("theirs\n")
      yield* run(ReadTool, { filePath: "f.txt" }, ctxFor(root))
      const out = yield* run(WriteTool, { filePath: "f.txt", content: "mine\n" }, ctxFor(root))
      expect(out.output).toBe("Wrote f.txt (1 line, 5 bytes; +1 -1 lines).")
      // Another session has read nothing: refused there.
      const other = yield* runFailure(WriteTool, { filePath: "f.txt", content: "x\n" }, ctxFor(root, "s2"))
      expect(other).toContain("has not been read in this session")
    }).pipe(Effect.provide(layer))
  )

  it.live("refuses a write over a file changed since the read, even with the same size and mtime", () =>
    Effect.gen(function* () {
      const fs = yield* FileSystem.FileSystem
      const root = yield* project({ "f.txt": "aaaa\nbbbb\n" })
      const path = joinPath(root, "f.txt")
      yield* run(ReadTool, { filePath: "f.txt" }, ctxFor(root))
      const info = yield* fs.stat(path)
      yield* fs.writeFileString(path, "aaaa\nBBBB\n")
      // Put the old mtime back: only the content hash can tell.
      const mtime = info.mtime._tag === "Some" ? info.mtime.value : new Date()
      yield* fs.utimes(path, mtime, mtime)
      const refused = yield* runFailure(WriteTool, { filePath: "f.txt", content: "new\n" }, ctxFor(root))
      expect(refused).toContain(
        "f.txt changed since you read it (line 2 changed, same size), so write would discard that change"
      )
      expect(refused).toContain("Read it again")
      expect(yield* readText(path)).toBe("aaaa\nBBBB\n")
    }).pipe(Effect.provide(layer))
  )

  it.live("a changed mtime with the same content is not a change: write is allowed and edit does not warn", () =>
    Effect.gen(function* () {
      const fs = yield* FileSystem.FileSystem
      const root = yield* project({ "f.txt": "keep\n" })
      const path = joinPath(root, "f.txt")
      yield* run(ReadTool, { filePath: "f.txt" }, ctxFor(root))
      // mtime flaps (a checkout, a copy, some network file systems); the bytes do not.
      const later = new Date(Date.now() + 60_000)
      yield* fs.utimes(path, later, later)
      const edited = yield* run(EditTool, { filePath: "f.txt", oldString: "keep", newString: "kept" }, ctxFor(root))
      expect(edited.output).not.toContain("Warning")
      expect(edited.metadata?.staleWarning).toBeUndefined()
      const again = new Date(Date.now() + 120_000)
      yield* fs.utimes(path, again, again)
      const out = yield* run(WriteTool, { filePath: "f.txt", content: "new\n" }, ctxFor(root))
      expect(out.output).toContain("Wrote f.txt")
      expect(yield* readText(path)).toBe("new\n")
    }).pipe(Effect.provide(layer))
  )

  it.live("refuses a write over a file changed since the session last wrote it", () =>
    Effect.gen(function* () {
      const fs = yield* FileSystem.FileSystem
      const root = yield* project()
      const path = joinPath(root, "w.txt")
      yield* run(WriteTool, { filePath: "w.txt", content: "mine\nmine\n" }, ctxFor(root))
      yield* fs.writeFileString(path, "mine\ntheirs\nmore\n")
      const refused = yield* runFailure(WriteTool, { filePath: "w.txt", content: "again\n" }, ctxFor(root))
      expect(refused).toContain(
        "w.txt changed since you last changed it with write (lines 2-3 changed; it is 1 line longer, 10 → 17 bytes), so write would discard that change"
      )
      expect(refused).toContain("Read it again")
      expect(yield* readText(path)).toBe("mine\ntheirs\nmore\n")
      // After a read the session has the current content: the write goes through.
      yield* run(ReadTool, { filePath: "w.txt" }, ctxFor(root))
      yield* run(WriteTool, { filePath: "w.txt", content: "again\n" }, ctxFor(root))
      expect(yield* readText(path)).toBe("again\n")
    }).pipe(Effect.provide(layer))
  )

  it.live("an edit or patch of a file never read does not count as reading it: write is refused until a read", () =>
    Effect.gen(function* () {
      const root = yield* project({ "e.txt": "one\ntwo\n", "p.txt": "alpha\nbeta\n" })
      yield* run(EditTool, { filePath: "e.txt", oldString: "one", newString: "ONE" }, ctxFor(root))
      const refused = yield* runFailure(WriteTool, { filePath: "e.txt", content: "all new\n" }, ctxFor(root))
      expect(refused).toBe(
        "e.txt has been changed with edit in this session but not read, so write would replace content you have not seen. Read it first, then write; or use edit to change part of it."
      )
      expect(yield* readText(joinPath(root, "e.txt"))).toBe("ONE\ntwo\n")
      yield* run(
        ApplyPatchTool,
        { patchText: "*** Begin Patch\n*** Update File: p.txt\n@@\n-beta\n+BETA\n*** End Patch" },
        ctxFor(root)
      )
      const patched = yield* runFailure(WriteTool, { filePath: "p.txt", content: "x\n" }, ctxFor(root))
      expect(patched).toContain("p.txt has been changed with apply_patch in this session but not read")
      // Once read, the model knows the content; a later edit keeps that, so write goes through.
      yield* run(ReadTool, { filePath: "e.txt" }, ctxFor(root))
      yield* run(EditTool, { filePath: "e.txt", oldString: "two", newString: "TWO" }, ctxFor(root))
      yield* run(WriteTool, { filePath: "e.txt", content: "all new\n" }, ctxFor(root))
      expect(yield* readText(joinPath(root, "e.txt"))).toBe("all new\n")
    }).pipe(Effect.provide(layer))
  )

  it.live("an edit after someone else changed the file (edit warns) leaves write refused until a read", () =>
    Effect.gen(function* () {
      const fs = yield* FileSystem.FileSystem
      const root = yield* project({ "f.txt": "a\nb\n" })
      yield* run(ReadTool, { filePath: "f.txt" }, ctxFor(root))
      yield* fs.writeFileString(joinPath(root, "f.txt"), "a\nb\ntheirs\n")
      const edited = yield* run(EditTool, { filePath: "f.txt", oldString: "a", newString: "A" }, ctxFor(root))
      expect(edited.output).toContain("Warning: f.txt changed since you read it")
      const refused = yield* runFailure(WriteTool, { filePath: "f.txt", content: "mine\n" }, ctxFor(root))
      expect(refused).toContain("has been changed with edit in this session but not read")
      expect(yield* readText(joinPath(root, "f.txt"))).toBe("A\nb\ntheirs\n")
    }).pipe(Effect.provide(layer))
  )

  it.live("writes through a symlink: the link stays, its target gets the content and keeps its mode", () =>
    Effect.gen(function* () {
      const fs = yield* FileSystem.FileSystem
      const root = yield* project({ "real/conf.ini": "a=1\n" })
      const real = joinPath(root, "real/conf.ini")
      yield* fs.chmod(real, 0o640)
      yield* fs.symlink(real, joinPath(root, "conf.ini"))
      yield* run(ReadTool, { filePath: "conf.ini" }, ctxFor(root))
      yield* run(WriteTool, { filePath: "conf.ini", content: "a=2\n" }, ctxFor(root))
      expect((yield* fs.lstat(joinPath(root, "conf.ini"))).type).toBe("SymbolicLink")
      expect(yield* fs.readLink(joinPath(root, "conf.ini"))).toBe(real)
      expect(yield* readText(real)).toBe("a=2\n")
      expect((yield* fs.stat(real)).mode & 0o777).toBe(0o640)
      expect((yield* fs.readDirectory(joinPath(root, "real"))).sort()).toEqual(["conf.ini"])
    }).pipe(Effect.provide(layer))
  )

  it.live("a file the session wrote or edited may be written again", () =>
    Effect.gen(function* () {
      const root = yield* project()
      yield* run(WriteTool, { filePath: "n.txt", content: "1\n" }, ctxFor(root))
      yield* run(WriteTool, { filePath: "n.txt", content: "2\n" }, ctxFor(root))
      yield* run(EditTool, { filePath: "n.txt", oldString: "2", newString: "3" }, ctxFor(root))
      yield* run(WriteTool, { filePath: "n.txt", content: "4\n" }, ctxFor(root))
      expect(yield* readText(joinPath(root, "n.txt"))).toBe("4\n")
    }).pipe(Effect.provide(layer))
  )

  it.live("keeps the replaced file's BOM and CRLF when the content states neither; explicit CRLF is kept", () =>
    Effect.gen(function* () {
      const root = yield* project({ "w.cs": "\uFEFFold\r\nfile\r\n", "u.txt": "a\nb\n" })
      yield* run(ReadTool, { filePath: "w.cs" }, ctxFor(root))
      yield* run(WriteTool, { filePath: "w.cs", content: "new\ncontent\n" }, ctxFor(root))
      expect(dec.decode(yield* readBytes(joinPath(root, "w.cs")))).toBe("\uFEFFnew\r\ncontent\r\n")
      yield* run(ReadTool, { filePath: "u.txt" }, ctxFor(root))
      yield* run(WriteTool, { filePath: "u.txt", content: "x\r\ny\r\n" }, ctxFor(root))
      expect(dec.decode(yield* readBytes(joinPath(root, "u.txt")))).toBe("x\r\ny\r\n")
    }).pipe(Effect.provide(layer))
  )

  it.live("refuses a directory", () =>
    Effect.gen(function* () {
      const root = yield* project({ "d/x": "1" })
      const message = yield* runFailure(WriteTool, { filePath: "d", content: "x" }, ctxFor(root))
      expect(message).toBe("d is a directory; give a file path.")
    }).pipe(Effect.provide(layer))
  )
})
