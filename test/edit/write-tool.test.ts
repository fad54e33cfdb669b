import { describe, expect, it } from "@effect/vitest"
import { Effect, FileSystem } from "effect"
import { EditTool } from "../../src/tools/edit.ts"
import { joinPath } from "../../src/tools/paths.ts"
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
      expect(out.output).toBe("Wrote f.txt (1 lines, 5 bytes; +1 -1 lines).")
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
