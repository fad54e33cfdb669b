/**
 * What a program gets for files: read's `text` (the whole file without line numbers, or nothing
 * when the read holds only part of it) and `update` (read, change, write: only those two calls, so
 * every rule that holds for them holds for it). Real files, the real Dispatcher and interpreter.
 */
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { afterAll, describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { describeCode } from "../../src/code/description.ts"
import { DEFAULT_LIMITS } from "../../src/code/limits.ts"
import type { ApprovalQuestion } from "../../src/permission/approval.ts"
import type { Tool } from "../../src/tool/tool.ts"
import { ReadTool } from "../../src/tools/read.ts"
import { WriteTool } from "../../src/tools/write.ts"
import { codeSystem, makeProject, runCode } from "./system.ts"

const LONG = "y".repeat(2500)
const BIG = Array.from({ length: 5000 }, (_, i) => `row ${i} DB_HOST`).join("\n")
const root = makeProject({
  "lf.txt": "alpha\nbeta\n",
  "bare.txt": "alpha\nbeta",
  "crlf.txt": "one\r\ntwo\r\n",
  "bom.txt": "\uFEFFfirst\nsecond\n",
  "empty.txt": "",
  "newline.txt": "\n",
  "long.txt": `short\n${LONG}\n`,
  "big.txt": BIG,
  ".env": "DB_HOST=x\n",
  "mixed.txt": "a\r\nb\n"
})
NodeFs.writeFileSync(NodePath.join(root, "latin1.txt"), Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x0a]))
afterAll(() => NodeFs.rmSync(root, { recursive: true, force: true }))

const file = (name: string) => NodeFs.readFileSync(NodePath.join(root, name), "utf8")
const bytes = (name: string) => NodeFs.readFileSync(NodePath.join(root, name))
/** The program's printed answer: its first line (the call summary follows). */
const answer = (output: string) => output.split("\n")[0]

describe("code: read gives a program the file's text", () => {
  it.live("the whole file without numbers: final newline or not, CRLF and BOM as read shows them, empty files", () =>
    Effect.gen(function* () {
      const ctx = yield* codeSystem(root)
      const r = yield* runCode(
        ctx,
        `const out = {}
         for (const f of ["lf.txt", "bare.txt", "crlf.txt", "bom.txt", "empty.txt", "newline.txt"])
           out[f] = (await tools.read({ filePath: f })).text
         return out`
      )
      expect(r.status, r.modelOutput).toBe("ok")
      expect(JSON.parse(answer(r.modelOutput)!)).toEqual({
        "lf.txt": "alpha\nbeta\n",
        "bare.txt": "alpha\nbeta",
        "crlf.txt": "one\ntwo\n",
        "bom.txt": "first\nsecond\n",
        "empty.txt": "",
        "newline.txt": "\n"
      })
    })
  )

  it.live(
    "absent when the read holds only part of the file: a window, a file past 2,000 lines, a cut line, bytes not UTF-8",
    () =>
      Effect.gen(function* () {
        const ctx = yield* codeSystem(root)
        const r = yield* runCode(
          ctx,
          `const has = async (args) => "text" in (await tools.read(args))
         return [
           await has({ filePath: "lf.txt", offset: 2 }),
           await has({ filePath: "lf.txt", limit: 1 }),
           await has({ filePath: "big.txt" }),
           await has({ filePath: "long.txt" }),
           await has({ filePath: "latin1.txt" }),
           await has({ filePath: "big.txt", limit: 5000 })
         ]`
        )
        expect(answer(r.modelOutput)).toBe("[false,false,false,false,false,true]")
      })
  )
})

describe("code: update reads, changes and writes one file through the one path", () => {
  it.live(
    "writes the change, keeping CRLF, the BOM and a missing final newline; an unchanged file is not written",
    () =>
      Effect.gen(function* () {
        const project = makeProject({
          "crlf.txt": "DB_HOST=1\r\nDB_HOST_OLD=2\r\n",
          "bom.txt": "\uFEFFDB_HOST\n",
          "bare.txt": "DB_HOST"
        })
        const ctx = yield* codeSystem(project, { answer: { answer: "once" } })
        const r = yield* runCode(
          ctx,
          `for (const f of ["crlf.txt", "bom.txt", "bare.txt"]) await update(f, (t) => t.replace(/DB_HOST\\b/g, "DATABASE_HOST"))
         return await update("crlf.txt", (t) => t)`
        )
        expect(r.status, r.modelOutput).toBe("ok")
        const at = (f: string) => NodeFs.readFileSync(NodePath.join(project, f), "utf8")
        expect(at("crlf.txt")).toBe("DATABASE_HOST=1\r\nDB_HOST_OLD=2\r\n")
        expect(at("bom.txt")).toBe("\uFEFFDATABASE_HOST\n")
        expect(at("bare.txt")).toBe("DATABASE_HOST")
        // Three reads and three writes, then one read and no write for the unchanged text.
        expect(r.modelOutput).toContain("[7 tool calls: 7 ok]")
        expect((r.metadata.calls as ReadonlyArray<{ tool: string }>).map((c) => c.tool)).toEqual([
          "read",
          "write",
          "read",
          "write",
          "read",
          "write",
          "read"
        ])
        NodeFs.rmSync(project, { recursive: true, force: true })
      })
  )

  it.live("a file past one read's 2,000 lines is read whole before it is written: nothing is lost", () =>
    Effect.gen(function* () {
      const project = makeProject({ "big.txt": BIG })
      const ctx = yield* codeSystem(project, { answer: { answer: "once" } })
      const r = yield* runCode(ctx, `await update("big.txt", (t) => t.replaceAll("DB_HOST", "DATABASE_HOST"))`)
      expect(r.status, r.modelOutput).toBe("ok")
      expect(NodeFs.readFileSync(NodePath.join(project, "big.txt"), "utf8")).toBe(
        BIG.replaceAll("DB_HOST", "DATABASE_HOST")
      )
      NodeFs.rmSync(project, { recursive: true, force: true })
    })
  )

  it.live(
    "a file read cannot give exactly (a cut line, bytes not UTF-8, mixed line ends) is never written: a ToolError says why",
    () =>
      Effect.gen(function* () {
        const ctx = yield* codeSystem(root, { answer: { answer: "once" } })
        const r = yield* runCode(
          ctx,
          `const out = []
         for (const f of ["long.txt", "latin1.txt", "mixed.txt"])
           await update(f, (t) => t + "!").catch((e) => out.push([e.name, e.status, e.message.includes("tools.edit")].join(" ")))
         return out`
        )
        expect(answer(r.modelOutput)).toBe('["ToolError error true","ToolError error true","ToolError error true"]')
        expect(file("long.txt")).toBe(`short\n${LONG}\n`)
        expect(file("mixed.txt")).toBe("a\r\nb\n")
        expect(bytes("latin1.txt")).toEqual(Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x0a]))
        expect(r.metadata.calls as ReadonlyArray<{ tool: string }>).toHaveLength(3)
      })
  )

  it.live(
    "a deny rule refuses update's write: it rejects with that ToolError, the program goes on, the result lists it",
    () =>
      Effect.gen(function* () {
        const project = makeProject({ "a.txt": "DB_HOST\n", "b.txt": "DB_HOST\n" })
        const ctx = yield* codeSystem(project, {
          answer: { answer: "once" },
          config: { permissions: { deny: ["Edit(./a.txt)"] } }
        })
        const r = yield* runCode(
          ctx,
          `const seen = []
         for (const f of ["a.txt", "b.txt"])
           await update(f, (t) => t.replace("DB_HOST", "DATABASE_HOST")).catch((e) => seen.push(e.status, e.tool))
         return seen`
        )
        expect(answer(r.modelOutput)).toBe('["denied","write"]')
        expect(r.modelOutput).toContain("write denied: The rule Edit(./a.txt) denies this write call.")
        expect(NodeFs.readFileSync(NodePath.join(project, "a.txt"), "utf8")).toBe("DB_HOST\n")
        expect(NodeFs.readFileSync(NodePath.join(project, "b.txt"), "utf8")).toBe("DATABASE_HOST\n")
        NodeFs.rmSync(project, { recursive: true, force: true })
      })
  )

  it.live("the stale-write check holds: a file that changed after update's read is not overwritten", () =>
    Effect.gen(function* () {
      const project = makeProject({ "a.txt": "one\n" })
      const ctx = yield* codeSystem(project, { answer: { answer: "once" } })
      const r = yield* runCode(
        ctx,
        `return await update("a.txt", async (t) => {
           await tools.bash({ command: "echo two >> a.txt", description: "change it" })
           return t + "three\\n"
         }).then(() => "written", (e) => e.status + " " + e.tool)`
      )
      expect(answer(r.modelOutput)).toBe("error write")
      expect(NodeFs.readFileSync(NodePath.join(project, "a.txt"), "utf8")).toBe("one\ntwo\n")
      NodeFs.rmSync(project, { recursive: true, force: true })
    })
  )

  it.live("a program's write of a file it never read is still refused", () =>
    Effect.gen(function* () {
      const project = makeProject({ "a.txt": "one\n" })
      const ctx = yield* codeSystem(project, { answer: { answer: "once" } })
      const r = yield* runCode(
        ctx,
        `return await tools.write({ filePath: "a.txt", content: "x" }).then(() => "written", (e) => e.message)`
      )
      expect(answer(r.modelOutput)).toContain("has not been read in this session")
      expect(NodeFs.readFileSync(NodePath.join(project, "a.txt"), "utf8")).toBe("one\n")
      NodeFs.rmSync(project, { recursive: true, force: true })
    })
  )

  it.live("secrets and control paths still ask the person: refused, nothing is read or written", () =>
    Effect.gen(function* () {
      const project = makeProject({ ".env": "DB_HOST=x\n", ".vscode/settings.json": "{}\n", "a.txt": "a\n" })
      const asked: Array<ApprovalQuestion> = []
      // acceptEdits: a plain write inside the project runs unasked, so what asks is the path.
      const ctx = yield* codeSystem(project, {
        asked,
        answer: { answer: "deny", message: "no" },
        config: { permissions: { defaultMode: "acceptEdits" } }
      })
      const r = yield* runCode(
        ctx,
        `const out = []
         for (const f of [".env", ".vscode/settings.json", "a.txt"])
           await update(f, (t) => t + "x\\n").then(() => out.push("written"), (e) => out.push(e.status + " " + e.tool))
         return out`
      )
      expect(answer(r.modelOutput)).toBe('["denied read","denied write","written"]')
      expect(asked).toHaveLength(2)
      expect(NodeFs.readFileSync(NodePath.join(project, ".env"), "utf8")).toBe("DB_HOST=x\n")
      expect(NodeFs.readFileSync(NodePath.join(project, ".vscode/settings.json"), "utf8")).toBe("{}\n")
      expect(NodeFs.readFileSync(NodePath.join(project, "a.txt"), "utf8")).toBe("a\nx\n")
      NodeFs.rmSync(project, { recursive: true, force: true })
    })
  )

  it.live("under read-only there is no update, and the description does not offer it", () =>
    Effect.gen(function* () {
      const ctx = yield* codeSystem(root)
      const r = yield* runCode(ctx, `return [typeof update, typeof tools.write]`, "read-only")
      expect(answer(r.modelOutput)).toBe('["undefined","undefined"]')
      // Only what a description is made from matters here: the tools' ids and declarations.
      const [read, write] = [ReadTool, WriteTool] as unknown as ReadonlyArray<Tool>
      expect(describeCode([read!], DEFAULT_LIMITS)).not.toContain("update(")
      expect(describeCode([read!], DEFAULT_LIMITS)).toContain("`text`")
      expect(describeCode([read!, write!], DEFAULT_LIMITS)).toContain("await update(filePath")
    })
  )
})
