import { describe, expect, it } from "@effect/vitest"
import { applyChunks } from "../../src/edit/patch-apply.ts"
import { type PatchOp, PatchSyntaxError, parsePatch } from "../../src/edit/patch-parse.ts"

const patch = (...lines: Array<string>) => ["*** Begin Patch", ...lines, "*** End Patch"].join("\n")

const syntaxError = (text: string): string => {
  try {
    parsePatch(text)
  } catch (e) {
    if (e instanceof PatchSyntaxError) return e.message
    throw e
  }
  throw new Error("parsed, but a syntax error was expected")
}

const update = (ops: Array<PatchOp>) => {
  const op = ops[0]!
  if (op.type !== "update") throw new Error("not an update")
  return op
}

describe("the patch grammar reads a line by its first character", () => {
  it("a context line holding *** End Patch is context, and the patch after it is not cut short", () => {
    const ops = parsePatch(
      patch("*** Update File: notes.md", "@@", " *** End Patch", "-old", "+new", "*** Delete File: gone.txt")
    )
    expect(update(ops).chunks[0]!.lines).toEqual([
      { kind: " ", text: "*** End Patch" },
      { kind: "-", text: "old" },
      { kind: "+", text: "new" }
    ])
    expect(ops[1]).toEqual({ type: "delete", path: "gone.txt" })
  })

  it("a C comment line '  *** Section ***' is context and applies", () => {
    const file = "/*\n  *** Section ***\n */\nint x = 1;\n"
    const ops = parsePatch(
      patch("*** Update File: a.c", "@@", "   *** Section ***", "  */", "-int x = 1;", "+int x = 2;")
    )
    const out = applyChunks(file, update(ops).chunks, "a.c")
    expect(out).toEqual({ ok: true, text: "/*\n  *** Section ***\n */\nint x = 2;\n" })
  })

  it("removed and added lines that begin with *** are content too", () => {
    const ops = parsePatch(patch("*** Update File: a.md", "@@", "-*** old", "+*** new"))
    expect(update(ops).chunks[0]!.lines).toEqual([
      { kind: "-", text: "*** old" },
      { kind: "+", text: "*** new" }
    ])
  })
})

describe("text around the envelope", () => {
  it("a second envelope is refused, naming its line (never silently dropped)", () => {
    const text = [patch("*** Delete File: a"), patch("*** Delete File: b")].join("\n")
    expect(syntaxError(text)).toMatch(/^patch line 4: a second "\*\*\* Begin Patch" envelope/)
  })

  it("a Begin Patch inside the envelope is refused", () => {
    expect(syntaxError(patch("*** Delete File: a", "*** Begin Patch", "*** Delete File: b"))).toMatch(
      /^patch line 3: "\*\*\* Begin Patch" again/
    )
  })

  it("prose before or after the envelope is a syntax error naming the line", () => {
    expect(syntaxError(`Here is the patch:\n${patch("*** Delete File: a")}`)).toMatch(
      /^patch line 1: .*Here is the patch/
    )
    expect(syntaxError(`${patch("*** Delete File: a")}\n\nThat should do it.`)).toMatch(
      /^patch line 5: text after "\*\*\* End Patch": "That should do it."/
    )
  })

  it("a heredoc wrapper is forgiven, with or without End Patch; blank lines around it too", () => {
    const ok = [{ type: "delete", path: "x" }]
    expect(parsePatch("\napply_patch <<'EOF'\n*** Begin Patch\n*** Delete File: x\n*** End Patch\nEOF\n\n")).toEqual(ok)
    expect(parsePatch('cat <<-"PATCH"\n*** Begin Patch\n*** Delete File: x\nPATCH\n')).toEqual(ok)
    expect(parsePatch("apply_patch <<EOF\n*** Begin Patch\n*** Add File: y\n+1\nEOF")).toEqual([
      { type: "add", path: "y", content: "1\n" }
    ])
    // Only the word that opened the heredoc closes it.
    expect(syntaxError("apply_patch <<'EOF'\n*** Begin Patch\n*** Delete File: x\n*** End Patch\nEND\n")).toMatch(
      /^patch line 5: text after/
    )
  })

  it("a NUL byte in a path is a syntax error", () => {
    expect(syntaxError(patch("*** Add File: a\0b", "+x"))).toMatch(/^patch line 2: .*NUL byte/)
    expect(syntaxError(patch("*** Update File: a", "*** Move to: b\0", "@@", "-x", "+y"))).toMatch(/NUL byte/)
  })
})

describe("a file with no final newline", () => {
  it("keeps having none after an update, also when lines are added at its end", () => {
    const ops = parsePatch(patch("*** Update File: a", "@@", " one", "-two", "+2", "+three", "*** End of File"))
    expect(applyChunks("one\ntwo", update(ops).chunks, "a")).toEqual({ ok: true, text: "one\n2\nthree" })
  })
})

describe("added lines fitted to the file's quotes", () => {
  it("a chunk matched with straight quotes against curly ones keeps the file's characters in what it repeats", () => {
    const file = 'const s = "She said “yes”"\nexport default s\n'
    const ops = parsePatch(
      patch(
        "*** Update File: a.ts",
        "@@",
        '-const s = "She said "yes""',
        '+const s = "She said "yes" twice"',
        " export default s"
      )
    )
    expect(applyChunks(file, update(ops).chunks, "a.ts")).toEqual({
      ok: true,
      text: 'const s = "She said “yes” twice"\nexport default s\n'
    })
  })

  it("an exact match writes the added lines as sent", () => {
    const ops = parsePatch(patch("*** Update File: a.ts", "@@", '-const s = "a"', "+const s = “b”"))
    expect(applyChunks('const s = "a"\n', update(ops).chunks, "a.ts")).toEqual({ ok: true, text: "const s = “b”\n" })
  })
})

describe("marker lines with whitespace around them (as Codex reads them)", () => {
  it("indented and space-trailed Begin, Update File, @@ and End Patch lines are markers", () => {
    const text = [
      "  *** Begin Patch  ",
      "  *** Update File: a.txt  ",
      "  @@  ",
      " one",
      "-two",
      "+TWO",
      "\t*** Update File: b.txt",
      "@@ def f(): ",
      "-x",
      "+y",
      "   *** Delete File: c.txt ",
      "  *** End Patch  ",
      ""
    ].join("\n")
    const ops = parsePatch(text)
    expect(ops).toEqual([
      {
        type: "update",
        path: "a.txt",
        moveTo: undefined,
        chunks: [
          {
            header: undefined,
            atEnd: false,
            lines: [
              { kind: " ", text: "one" },
              { kind: "-", text: "two" },
              { kind: "+", text: "TWO" }
            ]
          }
        ]
      },
      {
        type: "update",
        path: "b.txt",
        moveTo: undefined,
        chunks: [
          {
            header: "def f():",
            atEnd: false,
            lines: [
              { kind: "-", text: "x" },
              { kind: "+", text: "y" }
            ]
          }
        ]
      },
      { type: "delete", path: "c.txt" }
    ])
    expect(applyChunks("one\ntwo\n", update(ops).chunks, "a.txt")).toEqual({ ok: true, text: "one\nTWO\n" })
  })

  it("an indented End Patch closing an update is the end, not a context line", () => {
    const ops = parsePatch(["*** Begin Patch", "*** Update File: a.txt", "@@", "-a", "+b", " *** End Patch"].join("\n"))
    expect(update(ops).chunks[0]!.lines).toEqual([
      { kind: "-", text: "a" },
      { kind: "+", text: "b" }
    ])
  })
})

describe("quote fitting never undoes a change the patch makes", () => {
  // The context line quotes the file in ASCII (matched by folding), so the file's style is learned.
  const file = "“Hello,” she said — twice.\nHe said “hi”.\n"

  it("a line that turns typographic quotes into ASCII ones keeps the ASCII ones", () => {
    const ops = parsePatch(
      patch("*** Update File: a.txt", "@@", ' "Hello," she said - twice.', "-He said “hi”.", '+He said "hi".')
    )
    expect(applyChunks(file, update(ops).chunks, "a.txt")).toEqual({
      ok: true,
      text: '“Hello,” she said — twice.\nHe said "hi".\n'
    })
  })

  it("where old and new agree on the quote, the file's style is still written", () => {
    const ops = parsePatch(
      patch("*** Update File: a.txt", "@@", ' "Hello," she said - twice.', '-He said "hi".', '+He said "hi" again.')
    )
    expect(applyChunks(file, update(ops).chunks, "a.txt")).toEqual({
      ok: true,
      text: "“Hello,” she said — twice.\nHe said “hi” again.\n"
    })
  })
})
