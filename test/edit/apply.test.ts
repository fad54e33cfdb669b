import { describe, expect, it } from "@effect/vitest"
import { applyEdit, applyEditToBytes } from "../../src/edit/apply.ts"
import { unifiedDiff } from "../../src/edit/diff.ts"

const enc = new TextEncoder()
const dec = new TextDecoder("utf-8", { ignoreBOM: true })

const applied = (text: string, oldString: string, newString: string, replaceAll?: boolean) => {
  const out = applyEdit(text, { oldString, newString, ...(replaceAll === undefined ? {} : { replaceAll }) })
  if (out._tag !== "Applied") throw new Error(`${out._tag}: ${out.message}`)
  return out
}

describe("the edit cascade", () => {
  it("reports which replacer matched", () => {
    const text = "function a() {\n  return 1\n}\n"
    expect(applied(text, "return 1", "return 2").replacer).toBe("simple")
    expect(applied(text, "function a() {\n    return 1\n}", "function a() {\n    return 2\n}").replacer).toBe(
      "lineTrimmed"
    )
  })

  it("blockAnchor: one look-alike block below the similarity floor is refused, not edited", () => {
    const text = [
      "function load() {",
      "  const rows = db.query(sql)",
      "  cache.put(rows)",
      "  return rows",
      "}",
      ""
    ].join("\n")
    // Same first and last line, a different body: the spec's unconditional accept would edit it.
    const out = applyEdit(text, {
      oldString: "function load() {\n  const file = fs.readFileSync(p)\n  return JSON.parse(file)\n}",
      newString: "function load() {\n  return {}\n}"
    })
    expect(out._tag).toBe("NotFound")
  })

  it("blockAnchor: DB_HOST beside DB_HOST_OLD with a stale middle is ambiguous, with both line numbers", () => {
    const text = [
      "connect({",
      "  host: DB_HOST_OLD,",
      "  port: 1,",
      "})",
      "",
      "connect({",
      "  host: DB_HOST,",
      "  port: 2,",
      "})",
      ""
    ].join("\n")
    const out = applyEdit(text, {
      oldString: "connect({\n  host: DB_HOST,\n  port: 3,\n})",
      newString: "connect({\n  host: DB_HOST,\n  port: 4,\n})"
    })
    expect(out._tag).toBe("Ambiguous")
    if (out._tag !== "Ambiguous") return
    expect(out.lines).toEqual([1, 6])
    expect(out.message).toContain("lines 1, 6")
    expect(out.message).toContain("no edit was made")
  })

  it("an exact match in several places is ambiguous and lists every line; replaceAll changes all", () => {
    const text = "a = 1\nb = 2\na = 1\nc = 3\na = 1\n"
    const out = applyEdit(text, { oldString: "a = 1", newString: "a = 9" })
    expect(out._tag).toBe("Ambiguous")
    expect(out._tag === "Ambiguous" && out.message).toContain("lines 1, 3, 5")
    expect(out._tag === "Ambiguous" && out.message).toContain("replaceAll")
    const all = applied(text, "a = 1", "a = 9", true)
    expect(all.text).toBe("a = 9\nb = 2\na = 9\nc = 3\na = 9\n")
    expect(all.count).toBe(3)
    expect(all.lines).toEqual([1, 3, 5])
  })

  it("an ambiguous match lists every candidate's line, however many", () => {
    const text = Array.from({ length: 30 }, (_, i) => `f(${i})\nreturn 0`).join("\n")
    const out = applyEdit(text, { oldString: "return 0", newString: "return 1" })
    const lines = Array.from({ length: 30 }, (_, i) => 2 * i + 2)
    expect(out._tag === "Ambiguous" && out.lines).toEqual(lines)
    expect(out._tag === "Ambiguous" && out.message).toContain(`matches 30 places (lines ${lines.join(", ")})`)
  })

  it("a miss shows the closest region with line numbers and how each line differs", () => {
    const text = "one\ntwo\nconst total = sum(items)\nreturn total\nend\n"
    const out = applyEdit(text, { oldString: "const total = sum(itemz)\nreturn total", newString: "x" })
    expect(out._tag).toBe("NotFound")
    if (out._tag !== "NotFound") return
    expect(out.message).toContain("The closest text is at line 3")
    expect(out.message).toContain("3\tconst total = sum(items)")
    expect(out.message).toContain(
      '- line 3: the file has "const total = sum(items)", you sent "const total = sum(itemz)"'
    )
  })

  it("strips read's line-number prefixes when they are consecutive and name the matched line", () => {
    const text = "a\nb = 1\nc = 2\nd\n"
    const out = applied(text, "2\tb = 1\n3\tc = 2", "2\tb = 10\n3\tc = 2")
    expect(out.text).toBe("a\nb = 10\nc = 2\nd\n")
    // Numbers that point elsewhere: not the place meant.
    expect(applyEdit(text, { oldString: "7\tb = 1\n8\tc = 2", newString: "7\tb = 9\n8\tc = 2" })._tag).toBe("NotFound")
  })

  it("identical strings, and a newString that fits to the same text, are NoChange errors", () => {
    expect(applyEdit("a\n", { oldString: "a", newString: "a" })._tag).toBe("NoChange")
    expect(applyEdit("  a\n", { oldString: "    a", newString: "   a" })._tag).toBe("NoChange")
  })

  it("keeps CRLF and the BOM, and bytes outside the match never change", () => {
    const before = "\uFEFFline one\r\n  keep  \r\nline three\r\n"
    const out = applyEditToBytes(enc.encode(before), { oldString: "line three", newString: "line 3\nline 4" })
    expect(out._tag).toBe("Applied")
    if (out._tag !== "Applied") return
    expect(dec.decode(out.bytes)).toBe("\uFEFFline one\r\n  keep  \r\nline 3\r\nline 4\r\n")
    expect(out.bytes.subarray(0, 3)).toEqual(Uint8Array.from([0xef, 0xbb, 0xbf]))
  })

  it("a mixed-ending file is left as it is around the edit", () => {
    const before = "a\r\nb\nc\r\n"
    const out = applyEditToBytes(enc.encode(before), { oldString: "b", newString: "B" })
    expect(out._tag === "Applied" && dec.decode(out.bytes)).toBe("a\r\nB\nc\r\n")
  })

  it("an empty oldString on an existing file, and a binary file, are refused with what to do instead", () => {
    const empty = applyEditToBytes(enc.encode("x\n"), { oldString: "", newString: "y" })
    expect(empty._tag).toBe("EmptyOld")
    expect(empty._tag !== "Applied" && empty.message).toContain("use write")
    const binary = applyEditToBytes(Uint8Array.from([1, 0, 2]), { oldString: "a", newString: "b" })
    expect(binary._tag).toBe("Binary")
  })
})

describe("unifiedDiff", () => {
  it("gives hunks with 3 lines of context and counts", () => {
    const before = Array.from({ length: 20 }, (_, i) => `line ${i + 1}`).join("\n") + "\n"
    const after = before.replace("line 10\n", "line ten\nline 10.5\n")
    const d = unifiedDiff("f.txt", before, after)
    expect(d.additions).toBe(2)
    expect(d.deletions).toBe(1)
    expect(d.diff).toBe(
      [
        "--- a/f.txt",
        "+++ b/f.txt",
        "@@ -7,7 +7,8 @@",
        " line 7",
        " line 8",
        " line 9",
        "-line 10",
        "+line ten",
        "+line 10.5",
        " line 11",
        " line 12",
        " line 13",
        ""
      ].join("\n")
    )
    expect(unifiedDiff("f", "same\n", "same\n").diff).toBe("")
    expect(unifiedDiff("f", "", "new\n").diff).toContain("@@ -0,0 +1,1 @@")
    expect(unifiedDiff("f", "a\nb\n", "").diff).toContain("@@ -1,2 +0,0 @@\n-a\n-b\n")
    // A change deep in a long file: line numbers are the file's, context is 3 lines.
    const long = Array.from({ length: 5000 }, (_, i) => `l${i + 1}`).join("\n") + "\n"
    const deep = unifiedDiff("f", long, long.replace("l4000\n", "L4000\n"))
    expect(deep.diff).toContain("@@ -3997,7 +3997,7 @@\n l3997\n l3998\n l3999\n-l4000\n+L4000\n l4001\n")
  })
})
