import { describe, expect, it } from "@effect/vitest"
import { Effect, FileSystem } from "effect"
import { applyChunks } from "../../src/edit/patch-apply.ts"
import { PatchSyntaxError, parsePatch } from "../../src/edit/patch-parse.ts"
import { joinPath } from "../../src/path/path.ts"
import { ApplyPatchTool } from "../../src/tools/apply-patch.ts"
import { EditTool } from "../../src/tools/edit.ts"
import { ReadTool } from "../../src/tools/read.ts"
import { WriteTool } from "../../src/tools/write.ts"
import { run, runFailure } from "../tools/helpers.ts"
import { ctxFor, failingRename, layer, project, readText, writesOver } from "./helpers.ts"

const patch = (...lines: Array<string>) => ["*** Begin Patch", ...lines, "*** End Patch"].join("\n")

describe("patch parsing", () => {
  it("reads add, delete, update with move, several chunks and End of File", () => {
    const ops = parsePatch(
      patch(
        "*** Add File: a.txt",
        "+one",
        "+two",
        "*** Delete File: b.txt",
        "*** Update File: c.py",
        "*** Move to: d.py",
        "@@ def f():",
        " x = 1",
        "-y = 2",
        "+y = 3",
        "@@",
        "-last",
        "+final",
        "*** End of File"
      )
    )
    expect(ops).toEqual([
      { type: "add", path: "a.txt", content: "one\ntwo\n" },
      { type: "delete", path: "b.txt" },
      {
        type: "update",
        path: "c.py",
        moveTo: "d.py",
        chunks: [
          {
            header: "def f():",
            atEnd: false,
            lines: [
              { kind: " ", text: "x = 1" },
              { kind: "-", text: "y = 2" },
              { kind: "+", text: "y = 3" }
            ]
          },
          {
            header: undefined,
            atEnd: true,
            lines: [
              { kind: "-", text: "last" },
              { kind: "+", text: "final" }
            ]
          }
        ]
      }
    ])
  })

  it("forgives a heredoc wrapper and a missing End Patch, and names the line of a real error", () => {
    const wrapped = "apply_patch <<'EOF'\n*** Begin Patch\n*** Delete File: x\n*** End Patch\nEOF\n"
    expect(parsePatch(wrapped)).toEqual([{ type: "delete", path: "x" }])
    expect(parsePatch("*** Begin Patch\n*** Delete File: x\n")).toEqual([{ type: "delete", path: "x" }])
    expect(() => parsePatch("no envelope")).toThrow(PatchSyntaxError)
    expect(() => parsePatch(patch("*** Add File: a", "oops"))).toThrow(
      /patch line 3: every line of an added file starts with "\+"/
    )
    expect(() => parsePatch(patch("*** Update File: a", "@@", "?bad"))).toThrow(/starts with " " \(context\)/)
  })
})

describe("chunk seeking", () => {
  const file = "def a():\n    return 1\n\ndef b():\n    return 1\n"

  it("tolerates trailing whitespace, indentation and typographic punctuation; context keeps the file's bytes", () => {
    const text = "say(“hi”)  \n    keep   \nend\n"
    const r = applyChunks(
      text,
      [
        {
          header: undefined,
          atEnd: false,
          lines: [
            { kind: " ", text: 'say("hi")' },
            { kind: "-", text: "keep" },
            { kind: "+", text: "kept" }
          ]
        }
      ],
      "t"
    )
    expect(r).toEqual({ ok: true, text: "say(“hi”)  \nkept\nend\n" })
  })

  it("refuses a chunk that fits two places, and an @@ line disambiguates", () => {
    const chunk = {
      header: undefined,
      atEnd: false,
      lines: [
        { kind: "-" as const, text: "    return 1" },
        { kind: "+" as const, text: "    return 2" }
      ]
    }
    const r = applyChunks(file, [chunk], "f.py")
    expect(r.ok).toBe(false)
    expect(!r.ok && r.message).toContain("match at lines 2, 5")
    const fixed = applyChunks(file, [{ ...chunk, header: "def b():" }], "f.py")
    expect(fixed).toEqual({ ok: true, text: "def a():\n    return 1\n\ndef b():\n    return 2\n" })
  })

  it("a missing context shows the closest text", () => {
    const r = applyChunks(file, [{ header: undefined, atEnd: false, lines: [{ kind: "-", text: "def c():" }] }], "f.py")
    expect(!r.ok && r.message).toContain("were not found")
    expect(!r.ok && r.message).toContain("The closest text is at line")
  })

  it("a missing context after an earlier chunk shows the closest text with the file's own line numbers", () => {
    const text = `${Array.from({ length: 30 }, (_, i) => `line ${i + 1}`).join("\n")}\nconst total = sum(items)\nreturn total\n`
    const r = applyChunks(
      text,
      [
        {
          header: undefined,
          atEnd: false,
          lines: [
            { kind: " ", text: "line 10" },
            { kind: "-", text: "line 11" }
          ]
        },
        {
          header: undefined,
          atEnd: false,
          lines: [
            { kind: " ", text: "const total = sum(itemz)" },
            { kind: "-", text: "return total" }
          ]
        }
      ],
      "f.ts"
    )
    expect(r.ok).toBe(false)
    if (r.ok) return
    expect(r.message).toContain("chunk 2: its context and removed lines were not found after line 11")
    expect(r.message).toContain("The closest text is at line 31")
    expect(r.message).toContain("31\tconst total = sum(items)\n32\treturn total")
    expect(r.message).toContain(
      '- line 31: the file has "const total = sum(items)", you sent "const total = sum(itemz)"'
    )
  })
})

describe("apply_patch", () => {
  it.live("adds, deletes, updates and moves files in one patch", () =>
    Effect.gen(function* () {
      const fs = yield* FileSystem.FileSystem
      const root = yield* project({
        "old.txt": "bye\n",
        "src/m.ts": "export const a = 1\nexport const b = 2\n",
        "r.txt": "move me\n"
      })
      const out = yield* run(
        ApplyPatchTool,
        {
          patchText: patch(
            "*** Add File: docs/new.md",
            "+# New",
            "*** Delete File: old.txt",
            "*** Update File: src/m.ts",
            "@@",
            " export const a = 1",
            "-export const b = 2",
            "+export const b = 3",
            "*** Update File: r.txt",
            "*** Move to: moved/r.txt",
            "@@",
            "-move me",
            "+moved"
          )
        },
        ctxFor(root)
      )
      expect(out.output).toBe(
        "Applied the patch:\nA docs/new.md (+1 -0)\nD old.txt (+0 -1)\nM src/m.ts (+1 -1)\nR r.txt → moved/r.txt (+1 -1)"
      )
      expect(yield* readText(joinPath(root, "docs/new.md"))).toBe("# New\n")
      expect(yield* fs.exists(joinPath(root, "old.txt"))).toBe(false)
      expect(yield* readText(joinPath(root, "src/m.ts"))).toBe("export const a = 1\nexport const b = 3\n")
      expect(yield* fs.exists(joinPath(root, "r.txt"))).toBe(false)
      expect(yield* readText(joinPath(root, "moved/r.txt"))).toBe("moved\n")
      expect(out.metadata?.diff).toContain("+export const b = 3")
    }).pipe(Effect.provide(layer))
  )

  it("declares every path it touches (move targets included) and that it writes", () => {
    const paths = ApplyPatchTool.paths(
      { patchText: patch("*** Add File: a", "+x", "*** Update File: b", "*** Move to: c/d", "@@", "-1", "+2") },
      ctxFor("/proj")
    )
    expect(paths).toEqual(["/proj/a", "/proj/b", "/proj/c/d"])
    for (const tool of [ApplyPatchTool, EditTool, WriteTool]) {
      expect(tool.mutates).toBe(true)
      expect(tool.concurrencySafe).toBe(false)
      expect(tool.retrySafe).toBe(false)
      expect(tool.interruptBehavior).toBe("block")
      expect(tool.operations).toEqual(["file.write"])
    }
    expect(EditTool.paths({ filePath: "x/y.ts", oldString: "a", newString: "b" }, ctxFor("/proj"))).toEqual([
      "/proj/x/y.ts"
    ])
    expect(WriteTool.paths({ filePath: "/abs/z", content: "" }, ctxFor("/proj"))).toEqual(["/abs/z"])
  })

  it.live("is all-or-nothing: one bad chunk and no file changes", () =>
    Effect.gen(function* () {
      const fs = yield* FileSystem.FileSystem
      const root = yield* project({ "a.txt": "a\n", "b.txt": "b\n" })
      const message = yield* runFailure(
        ApplyPatchTool,
        {
          patchText: patch(
            "*** Update File: a.txt",
            "@@",
            "-a",
            "+A",
            "*** Add File: c.txt",
            "+c",
            "*** Update File: b.txt",
            "@@",
            "-not there",
            "+x"
          )
        },
        ctxFor(root)
      )
      expect(message).toContain("b.txt, chunk 1: its context and removed lines were not found")
      expect(message).toContain("Nothing was changed.")
      expect(yield* readText(joinPath(root, "a.txt"))).toBe("a\n")
      expect(yield* fs.exists(joinPath(root, "c.txt"))).toBe(false)
    }).pipe(Effect.provide(layer))
  )

  it.live("a write that fails midway rolls back the files already written", () =>
    Effect.gen(function* () {
      const fs = yield* FileSystem.FileSystem
      const root = yield* project({ "a.txt": "a\n", "b.txt": "b\n" })
      // The second rename into place fails (a full disk, say).
      const flaky = failingRename(fs, 2)
      const message = yield* runFailure(
        ApplyPatchTool,
        { patchText: patch("*** Update File: a.txt", "@@", "-a", "+A", "*** Update File: b.txt", "@@", "-b", "+B") },
        ctxFor(root)
      ).pipe(Effect.provide(writesOver(flaky)))
      expect(message).toContain("disk full")
      expect(message).toContain("rolled back")
      expect(yield* readText(joinPath(root, "a.txt"))).toBe("a\n")
      expect(yield* readText(joinPath(root, "b.txt"))).toBe("b\n")
    }).pipe(Effect.provide(layer))
  )

  it.live("refuses adding an existing file, updating a missing one, and a parse error, saying what to do", () =>
    Effect.gen(function* () {
      const root = yield* project({ "a.txt": "a\n" })
      const add = yield* runFailure(ApplyPatchTool, { patchText: patch("*** Add File: a.txt", "+x") }, ctxFor(root))
      expect(add).toContain('a.txt already exists; use "*** Update File:"')
      const upd = yield* runFailure(
        ApplyPatchTool,
        { patchText: patch("*** Update File: z.txt", "@@", "-a", "+b") },
        ctxFor(root)
      )
      expect(upd).toContain("z.txt does not exist")
      const bad = yield* runFailure(ApplyPatchTool, { patchText: "*** Update File: a.txt" }, ctxFor(root))
      expect(bad).toContain('The patch did not parse: patch line 1: the patch must start with "*** Begin Patch"')
    }).pipe(Effect.provide(layer))
  )

  it.live("warns when an updated file changed since the session read it; End of File anchors a chunk at the end", () =>
    Effect.gen(function* () {
      const fs = yield* FileSystem.FileSystem
      const root = yield* project({ "f.txt": "x\nend\nmid\nend\n" })
      yield* run(ReadTool, { filePath: "f.txt" }, ctxFor(root))
      yield* fs.writeFileString(joinPath(root, "f.txt"), "X\nend\nmid\nend\n")
      const out = yield* run(
        ApplyPatchTool,
        { patchText: patch("*** Update File: f.txt", "@@", "-end", "+END", "*** End of File") },
        ctxFor(root)
      )
      expect(out.output).toContain("Warning: f.txt changed since you read it (line 1 changed, same size)")
      expect(yield* readText(joinPath(root, "f.txt"))).toBe("X\nend\nmid\nEND\n")
    }).pipe(Effect.provide(layer))
  )

  it.live("keeps CRLF and BOM of an updated file", () =>
    Effect.gen(function* () {
      const fs = yield* FileSystem.FileSystem
      const root = yield* project({ "w.cs": "\uFEFFa\r\nb\r\nc\r\n" })
      yield* run(ApplyPatchTool, { patchText: patch("*** Update File: w.cs", "@@", " a", "-b", "+B") }, ctxFor(root))
      const bytes = yield* fs.readFile(joinPath(root, "w.cs"))
      expect(new TextDecoder("utf-8", { ignoreBOM: true }).decode(bytes)).toBe("\uFEFFa\r\nB\r\nc\r\n")
    }).pipe(Effect.provide(layer))
  )
})
