import * as NFS from "node:fs"
import * as NodePath from "node:path"
import { describe, expect, it } from "vitest"
import { tempDirs } from "../temp-dirs.ts"
import { startChild } from "./processes.ts"

const tempDir = tempDirs()

describe("two processes editing one file", () => {
  // Without the machine-wide lock this fails: one process's edit overwrites the other's, and its
  // next oldString is gone.
  it("lose no edit: each process's counter reaches its count, one of them through a symlinked folder", async () => {
    const root = tempDir("freecode-2proc-")
    NFS.mkdirSync(NodePath.join(root, "real"))
    NFS.symlinkSync(NodePath.join(root, "real"), NodePath.join(root, "link"))
    const file = NodePath.join(root, "real", "counters.txt")
    NFS.writeFileSync(file, "header\nA: 0\nmiddle\nB: 0\nfooter\n")
    const times = 25
    const go = NodePath.join(root, "go")
    // A through the real folder, B through the link: one file, two writers, started together.
    const runs = [
      startChild({ root, go, counter: { filePath: "real/counters.txt", label: "A", times } }),
      startChild({ root, go, counter: { filePath: NodePath.join(root, "link", "counters.txt"), label: "B", times } })
    ]
    await Promise.all(runs.map((r) => r.ready))
    NFS.writeFileSync(go, "")
    const results = await Promise.all(runs.map((r) => r.result))
    for (const r of results) expect(r).toEqual({ ok: times, failed: 0, messages: [] })
    expect(NFS.readFileSync(file, "utf8")).toBe(`header\nA: ${times}\nmiddle\nB: ${times}\nfooter\n`)
    // Nothing left behind: no temp file in the project, only the staging folder's own .gitignore.
    NFS.rmSync(go)
    expect(NFS.readdirSync(NodePath.join(root, "real"))).toEqual(["counters.txt"])
    expect(NFS.readdirSync(NodePath.join(root, ".freecode", "staging"))).toEqual([".gitignore"])
  }, 60_000)
})

describe("two processes writing into the same new folders", () => {
  // make-folders.ts takes a folder another write made in the moment between its look and its
  // mkdir (a folder, this user's); each of the two makes half of them first.
  it("both write every file: neither is refused for the folder the other made", async () => {
    const root = tempDir("freecode-2proc-folders-")
    const go = NodePath.join(root, "go")
    const n = 30
    const callsOf = (who: string) =>
      Array.from({ length: n }, (_, k) => ({
        tool: "write" as const,
        args: { filePath: `made/f${k}/deep/${who}.txt`, content: `${who} ${k}\n` }
      }))
    const runs = [startChild({ root, go, calls: callsOf("a") }), startChild({ root, go, calls: callsOf("b") })]
    await Promise.all(runs.map((r) => r.ready))
    NFS.writeFileSync(go, "")
    const results = await Promise.all(runs.map((r) => r.result))
    for (const r of results) expect(r).toEqual({ ok: n, failed: 0, messages: [] })
    for (let k = 0; k < n; k++)
      expect(NFS.readdirSync(NodePath.join(root, "made", `f${k}`, "deep")).sort()).toEqual(["a.txt", "b.txt"])
  }, 60_000)
})
