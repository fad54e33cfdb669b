import { spawnSync } from "node:child_process"
import * as NFS from "node:fs"
import * as NodePath from "node:path"
import { it as effectIt } from "@effect/vitest"
import { Effect, Fiber } from "effect"
import { describe, expect, it } from "vitest"
import { acquireFileLock, lockFileOf, releaseFileLock } from "../../src/edit/file-lock.ts"
import { me, ownerTag } from "../../src/edit/owner.ts"
import { makeStagingFolder, recoverStaging } from "../../src/edit/staging.ts"
import { EditTool } from "../../src/tools/edit.ts"
import { tempDirs } from "../temp-dirs.ts"
import { run } from "../tools/helpers.ts"
import { ctxFor, layer } from "./helpers.ts"
import { startChild, waitFor } from "./processes.ts"

const tempDir = tempDirs()

/** A pid that no process has now: a child that has already exited. */
const deadPid = (): number => spawnSync(process.execPath, ["-e", ""]).pid!

/** An edit in this process: the first write for a project recovers its staging folder. */
const editHere = (root: string, filePath: string, oldString: string, newString: string) =>
  Effect.runPromise(run(EditTool, { filePath, oldString, newString }, ctxFor(root)).pipe(Effect.provide(layer)))

const staged = (root: string) => NFS.readdirSync(NodePath.join(root, ".freecode", "staging")).sort()

describe("recovery of a dead process's staging folder", () => {
  it("rolls a committed journal forward and removes a dead owner's other temps", () => {
    const root = tempDir("freecode-recover-")
    const staging = makeStagingFolder(root)
    const owner = `${deadPid()}-0`
    for (const n of ["a", "b", "c"]) NFS.writeFileSync(NodePath.join(root, `${n}.txt`), `old ${n}\n`)
    const temp = (n: string) => NodePath.join(staging, `${owner}-t${n}.tmp`)
    NFS.writeFileSync(temp("a"), "new a\n")
    NFS.writeFileSync(temp("b"), "new b\n")
    NFS.writeFileSync(temp("x"), "an unfinished single write\n")
    const entries = [
      { op: "put", temp: temp("a"), target: NodePath.join(root, "a.txt") },
      { op: "put", temp: temp("b"), target: NodePath.join(root, "b.txt") },
      { op: "remove", target: NodePath.join(root, "c.txt") }
    ]
    NFS.writeFileSync(NodePath.join(staging, `${owner}-j1.journal`), JSON.stringify(entries))
    Effect.runSync(recoverStaging(staging))
    expect(NFS.readFileSync(NodePath.join(root, "a.txt"), "utf8")).toBe("new a\n")
    expect(NFS.readFileSync(NodePath.join(root, "b.txt"), "utf8")).toBe("new b\n")
    expect(NFS.existsSync(NodePath.join(root, "c.txt"))).toBe(false)
    expect(staged(root)).toEqual([".gitignore"])
  })

  it("an uncommitted journal is rolled back: the originals stay, the temps go", () => {
    const root = tempDir("freecode-recover-")
    const staging = makeStagingFolder(root)
    const owner = `${deadPid()}-0`
    NFS.writeFileSync(NodePath.join(root, "a.txt"), "old\n")
    NFS.writeFileSync(NodePath.join(staging, `${owner}-t1.tmp`), "new\n")
    NFS.writeFileSync(NodePath.join(staging, `${owner}-j1.journal.part`), "[")
    // A live owner's files are left alone.
    NFS.writeFileSync(NodePath.join(staging, `${ownerTag(me)}-t2.tmp`), "mine\n")
    Effect.runSync(recoverStaging(staging))
    expect(NFS.readFileSync(NodePath.join(root, "a.txt"), "utf8")).toBe("old\n")
    expect(staged(root)).toEqual([".gitignore", `${ownerTag(me)}-t2.tmp`])
  })

  // Under the test clock, which nobody advances here: a taker that had to wait would sleep forever,
  // so a taker that is done did not wait. A live holder's lock is the control: its taker waits.
  effectIt.effect("a lock left by a killed process is broken at once, not waited out", () =>
    Effect.gen(function* () {
      const root = tempDir("freecode-recover-")
      const file = NodePath.join(root, "f.txt")
      NFS.writeFileSync(file, "x = 1\n")
      const take = acquireFileLock(file, makeStagingFolder(root), () => Effect.void)
      NFS.writeFileSync(lockFileOf(file), `${deadPid()}-0\n${makeStagingFolder(root)}\n`)
      const broken = yield* Effect.forkChild(take)
      for (let i = 0; i < 20 && broken.pollUnsafe() === undefined; i++) yield* Effect.yieldNow
      expect(broken.pollUnsafe()?._tag).toBe("Success")
      yield* releaseFileLock(lockFileOf(file))

      NFS.writeFileSync(lockFileOf(file), `${ownerTag(me)}\n${makeStagingFolder(root)}\n`)
      const held = yield* Effect.forkChild(take)
      for (let i = 0; i < 20; i++) yield* Effect.yieldNow
      expect(held.pollUnsafe()).toBeUndefined()
      yield* Fiber.interrupt(held)
      NFS.rmSync(lockFileOf(file), { force: true })
    })
  )

  it("an edit after a killed process's lock goes through", async () => {
    const root = tempDir("freecode-recover-")
    NFS.writeFileSync(NodePath.join(root, "f.txt"), "x = 1\n")
    NFS.writeFileSync(lockFileOf(NodePath.join(root, "f.txt")), `${deadPid()}-0\n${makeStagingFolder(root)}\n`)
    await editHere(root, "f.txt", "x = 1", "x = 2")
    expect(NFS.readFileSync(NodePath.join(root, "f.txt"), "utf8")).toBe("x = 2\n")
  })
})

describe("kill -9 in the middle of a call", () => {
  it("edit, write and a 10-file apply_patch: every file is old or new, whole, and nothing is left in the project", async () => {
    const root = tempDir("freecode-kill-")
    const staging = makeStagingFolder(root)
    const big = (c: string) => `${c.repeat(79)}\n`.repeat(200_000) // 16 MB
    NFS.writeFileSync(NodePath.join(root, "edit.txt"), `${big("e")}last line\n`)
    const files = Array.from({ length: 10 }, (_, i) => `p${i}.txt`)
    for (const f of files) NFS.writeFileSync(NodePath.join(root, f), `${big("p").slice(0, 2_000_000)}tail ${f}\n`)
    const patch = [
      "*** Begin Patch",
      ...files.flatMap((f) => [`*** Update File: ${f}`, "@@", `-tail ${f}`, `+TAIL ${f}`]),
      "*** End Patch"
    ].join("\n")
    const go = NodePath.join(root, "go")
    const children = {
      edit: startChild({
        root,
        go,
        call: { tool: "edit", args: { filePath: "edit.txt", oldString: "last line", newString: "LAST" } }
      }),
      write: startChild({ root, go, call: { tool: "write", args: { filePath: "new.txt", content: big("w") } } }),
      patch: startChild({ root, go, call: { tool: "apply_patch", args: { patchText: patch } } })
    }
    await Promise.all(Object.values(children).map((c) => c.ready))
    const tempsOf = (pid: number) => () => NFS.readdirSync(staging).some((n) => n.startsWith(`${pid}-`))
    NFS.writeFileSync(go, "")
    // Each is killed as soon as it has a temp file in the staging folder: mid-write. On a loaded
    // machine a child may finish between the look and the kill; what holds for every file below
    // holds then too, and the kill must have landed mid-call in at least one of them.
    const outcomes = await Promise.all(
      Object.values(children).map(async (c) => {
        const seen = await waitFor(tempsOf(c.child.pid!), 30_000)
        c.child.kill("SIGKILL")
        const result = await c.result
        if (result !== undefined) return "finished"
        return seen ? "killed mid-call" : "killed before writing a temp file"
      })
    )
    expect(outcomes).not.toContain("killed before writing a temp file")
    expect(outcomes).toContain("killed mid-call")
    const text = (f: string) => NFS.readFileSync(NodePath.join(root, f), "utf8")
    expect([`${big("e")}last line\n`, `${big("e")}LAST\n`]).toContain(text("edit.txt"))
    if (NFS.existsSync(NodePath.join(root, "new.txt"))) expect(text("new.txt")).toBe(big("w"))
    const patched = files.map((f) => text(f).endsWith(`TAIL ${f}\n`))
    expect(new Set(patched).size).toBe(1)

    // The next start (here: the first edit of this process in the project) cleans up.
    NFS.writeFileSync(NodePath.join(root, "other.txt"), "y = 1\n")
    await editHere(root, "other.txt", "y = 1", "y = 2")
    expect(staged(root)).toEqual([".gitignore"])
    const names = NFS.readdirSync(root).filter(
      (n) => !["go", ".freecode", "other.txt", "edit.txt", "new.txt"].includes(n)
    )
    expect(names.sort()).toEqual([...files].sort())
    expect(new Set(files.map((f) => text(f).endsWith(`TAIL ${f}\n`))).size).toBe(1)
  }, 90_000)
})
