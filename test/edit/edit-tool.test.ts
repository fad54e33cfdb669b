import { describe, expect, it } from "@effect/vitest"
import { Effect, FileSystem } from "effect"
import { joinPath } from "../../src/path/path.ts"
import { EditTool } from "../../src/tools/edit.ts"
import { ReadTool } from "../../src/tools/read.ts"
import { run, runFailure } from "../tools/helpers.ts"
import { ctxFor, layer, project, readBytes, readText } from "./helpers.ts"

describe("edit", () => {
  it.live("replaces, reports the replacer and a unified diff, and answers the model briefly", () =>
    Effect.gen(function* () {
      const body = Array.from({ length: 200 }, (_, i) => `line ${i + 1}`).join("\n")
      const root = yield* project({ "a.txt": `${body}\n` })
      const out = yield* run(
        EditTool,
        { filePath: "a.txt", oldString: "line 100\n", newString: "line hundred\n" },
        ctxFor(root)
      )
      expect(out.output).toBe("Edited a.txt at line 100: +1 -1 lines.")
      expect(out.metadata).toMatchObject({ replacer: "simple", replacements: 1, additions: 1, deletions: 1 })
      expect(out.metadata?.diff).toContain("-line 100\n+line hundred\n")
      expect(yield* readText(joinPath(root, "a.txt"))).toBe(`${body.replace("line 100\n", "line hundred\n")}\n`)
    }).pipe(Effect.provide(layer))
  )

  it.live("a loose match says so and shows the edited lines as they now read", () =>
    Effect.gen(function* () {
      const root = yield* project({ "m.go": "func f() {\n\tif x {\n\t\treturn 1\n\t}\n}\n" })
      const out = yield* run(
        EditTool,
        {
          filePath: "m.go",
          oldString: "    if x {\n        return 1\n    }",
          newString: "    if x {\n        return 2\n    }"
        },
        ctxFor(root)
      )
      expect(out.metadata).toMatchObject({ replacer: "lineTrimmed" })
      expect(out.output).toContain("matched by lineTrimmed")
      expect(out.output).toContain("2\t\tif x {\n3\t\t\treturn 2\n4\t\t}")
      expect(yield* readText(joinPath(root, "m.go"))).toBe("func f() {\n\tif x {\n\t\treturn 2\n\t}\n}\n")
    }).pipe(Effect.provide(layer))
  )

  it.live("an empty oldString creates a missing file (and its folders); on an existing file it is refused", () =>
    Effect.gen(function* () {
      const root = yield* project({ "x.txt": "x\n" })
      const out = yield* run(
        EditTool,
        { filePath: "new/dir/n.ts", oldString: "", newString: "export {}\n" },
        ctxFor(root)
      )
      expect(out.output).toBe("Created new/dir/n.ts (1 line).")
      expect(yield* readText(joinPath(root, "new/dir/n.ts"))).toBe("export {}\n")
      const refused = yield* runFailure(EditTool, { filePath: "x.txt", oldString: "", newString: "y" }, ctxFor(root))
      expect(refused).toContain("oldString is empty but the file already exists")
      expect(refused).toContain("use write")
      expect(yield* readText(joinPath(root, "x.txt"))).toBe("x\n")
    }).pipe(Effect.provide(layer))
  )

  it.live("identical strings and a missing file are errors that say what to do", () =>
    Effect.gen(function* () {
      const root = yield* project({ "src/config.ts": "a\n" })
      const same = yield* runFailure(
        EditTool,
        { filePath: "src/config.ts", oldString: "a", newString: "a" },
        ctxFor(root)
      )
      expect(same).toContain("identical")
      const missing = yield* runFailure(
        EditTool,
        { filePath: "src/confg.ts", oldString: "a", newString: "b" },
        ctxFor(root)
      )
      expect(missing).toContain("File not found: src/confg.ts. Did you mean src/config.ts?")
    }).pipe(Effect.provide(layer))
  )

  it.live("warns, without blocking, when the file changed since the model read it, naming the lines", () =>
    Effect.gen(function* () {
      const fs = yield* FileSystem.FileSystem
      const root = yield* project({ "f.txt": "one\ntwo\nthree\nfour\n" })
      const ctx = ctxFor(root)
      yield* run(ReadTool, { filePath: "f.txt" }, ctx)
      // Someone else changes line 4; same size, so only the hash can tell.
      yield* fs.writeFileString(joinPath(root, "f.txt"), "one\ntwo\nthree\nFOUR\n")
      const out = yield* run(EditTool, { filePath: "f.txt", oldString: "one", newString: "1" }, ctxFor(root))
      expect(out.output).toContain("Warning: f.txt changed since you read it (line 4 changed, same size)")
      expect(out.metadata?.staleWarning).toBeDefined()
      expect(yield* readText(joinPath(root, "f.txt"))).toBe("1\ntwo\nthree\nFOUR\n")
      // After its own edit the model's record is current: no warning.
      const again = yield* run(EditTool, { filePath: "f.txt", oldString: "two", newString: "2" }, ctxFor(root))
      expect(again.output).not.toContain("Warning")
    }).pipe(Effect.provide(layer))
  )

  it.live("a failed edit leaves the file byte-for-byte as it was", () =>
    Effect.gen(function* () {
      const root = yield* project({ "f.txt": "\uFEFFa\r\nb\r\na\r\n" })
      const before = yield* readBytes(joinPath(root, "f.txt"))
      const message = yield* runFailure(EditTool, { filePath: "f.txt", oldString: "a", newString: "c" }, ctxFor(root))
      expect(message).toContain("matches 2 places (lines 1, 3)")
      expect(yield* readBytes(joinPath(root, "f.txt"))).toEqual(before)
    }).pipe(Effect.provide(layer))
  )

  it.live("writes through a symlink and keeps the file's mode", () =>
    Effect.gen(function* () {
      const fs = yield* FileSystem.FileSystem
      const root = yield* project({ "real/script.sh": "#!/bin/sh\necho hi\n" })
      yield* fs.chmod(joinPath(root, "real/script.sh"), 0o751)
      yield* fs.symlink(joinPath(root, "real/script.sh"), joinPath(root, "link.sh"))
      yield* run(EditTool, { filePath: "link.sh", oldString: "echo hi", newString: "echo bye" }, ctxFor(root))
      expect((yield* fs.lstat(joinPath(root, "link.sh"))).type).toBe("SymbolicLink")
      expect(yield* readText(joinPath(root, "real/script.sh"))).toBe("#!/bin/sh\necho bye\n")
      expect((yield* fs.stat(joinPath(root, "real/script.sh"))).mode & 0o777).toBe(0o751)
      expect((yield* fs.readDirectory(joinPath(root, "real"))).sort()).toEqual(["script.sh"])
    }).pipe(Effect.provide(layer))
  )

  it.live("two concurrent edits of one file both apply: no lost update", () =>
    Effect.gen(function* () {
      const lines = Array.from({ length: 50 }, (_, i) => `value_${i} = ${i}`)
      const root = yield* project({ "c.py": `${lines.join("\n")}\n` })
      const edits = lines.map((l, i) =>
        run(EditTool, { filePath: "c.py", oldString: l, newString: `value_${i} = ${i * 100 + 1}` }, ctxFor(root))
      )
      yield* Effect.all(edits, { concurrency: "unbounded" })
      const after = yield* readText(joinPath(root, "c.py"))
      expect(after).toBe(`${lines.map((_, i) => `value_${i} = ${i * 100 + 1}`).join("\n")}\n`)
    }).pipe(Effect.provide(layer))
  )

  it.live("edits of one file through a symlinked folder and its real folder are one writer at a time", () =>
    Effect.gen(function* () {
      const lines = Array.from({ length: 40 }, (_, i) => `value_${i} = ${i}`)
      const root = yield* project({ "real/c.py": `${lines.join("\n")}\n` })
      const fs = yield* FileSystem.FileSystem
      yield* fs.symlink(joinPath(root, "real"), joinPath(root, "link"))
      const edits = lines.map((l, i) =>
        run(
          EditTool,
          { filePath: i % 2 === 0 ? "real/c.py" : "link/c.py", oldString: l, newString: `value_${i} = ${i * 100 + 1}` },
          ctxFor(root)
        )
      )
      yield* Effect.all(edits, { concurrency: "unbounded" })
      const after = yield* readText(joinPath(root, "real/c.py"))
      expect(after).toBe(`${lines.map((_, i) => `value_${i} = ${i * 100 + 1}`).join("\n")}\n`)
    }).pipe(Effect.provide(layer))
  )

  it.live("two concurrent edits of the same text: one applies, the other fails cleanly", () =>
    Effect.gen(function* () {
      const root = yield* project({ "f.txt": "x = 1\n" })
      const results = yield* Effect.all(
        [
          Effect.result(run(EditTool, { filePath: "f.txt", oldString: "x = 1", newString: "x = 2" }, ctxFor(root))),
          Effect.result(run(EditTool, { filePath: "f.txt", oldString: "x = 1", newString: "x = 3" }, ctxFor(root)))
        ],
        { concurrency: "unbounded" }
      )
      const ok = results.filter((r) => r._tag === "Success")
      expect(ok).toHaveLength(1)
      const after = yield* readText(joinPath(root, "f.txt"))
      expect(["x = 2\n", "x = 3\n"]).toContain(after)
    }).pipe(Effect.provide(layer))
  )
})
