/**
 * Over an in-memory FileSystem, where a write lands is found through that FileSystem: a
 * dangling link in the project is followed to its target (outside the project, or into a
 * control path), so the permission check sees the file the write would create; and nothing
 * touches the host's disk (no such project exists there, and a host-disk walk would have seen
 * plain new files inside the project).
 */
import * as NodeFs from "node:fs"
import { describe, expect, it } from "@effect/vitest"
import { Effect, FileSystem, Layer } from "effect"
import { ToolSystem } from "../../layers/live.ts"
import { Dispatcher } from "../../src/dispatch/dispatcher.ts"
import { MemoryFileSystem } from "../../src/fs/memory.ts"
import { Approval, type ApprovalQuestion } from "../../src/permission/approval.ts"

const root = "/memory-landing"

describe("a write's paths resolve through the file system in context", () => {
  it.live("dangling links in memory: one out of the project, one into .git/hooks; a plain new file", () =>
    Effect.gen(function* () {
      expect(NodeFs.existsSync(root)).toBe(false)
      const asked: Array<ApprovalQuestion> = []
      const memory = MemoryFileSystem.layer({
        [`${root}/a.txt`]: "a\n",
        [`${root}/.git/hooks/.keep`]: "",
        "/elsewhere/.keep": ""
      })
      const system = ToolSystem.layer({ root, config: { permissions: { defaultMode: "acceptEdits" } } }).pipe(
        Layer.provideMerge(Layer.merge(memory, Approval.layerTest({ answer: "deny" }, asked)))
      )
      yield* Effect.gen(function* () {
        const fs = yield* FileSystem.FileSystem
        yield* fs.symlink("/elsewhere/x.txt", `${root}/out.txt`)
        yield* fs.symlink(".git/hooks/pre-commit", `${root}/hook`)
        const d = yield* Dispatcher
        const write = (id: string, filePath: string) =>
          d.dispatch({ id, name: "write", args: { filePath, content: "#!/bin/sh\necho pwned\n" } }, { sessionId: "s" })
        const out = yield* write("w1", "out.txt")
        const hook = yield* write("w2", "hook")
        const plain = yield* write("w3", "new.txt")
        // acceptEdits lets a plain write inside the project run without asking...
        expect(plain.status).toBe("ok")
        expect(yield* fs.readFileString(`${root}/new.txt`)).toBe("#!/bin/sh\necho pwned\n")
        // ...but the link out of the project is a write outside it, and the one into .git/hooks a
        // write to a control path: each is asked about, as where it lands (denied here), and
        // neither file exists.
        expect(asked.map((q) => [q.callId, q.reason])).toEqual([
          ["w1", expect.stringContaining("/elsewhere/x.txt")],
          ["w2", expect.stringContaining(".git/hooks")]
        ])
        expect(out.status).toBe("denied")
        expect(hook.status).toBe("denied")
        expect(yield* fs.exists("/elsewhere/x.txt")).toBe(false)
        expect(yield* fs.exists(`${root}/.git/hooks/pre-commit`)).toBe(false)
      }).pipe(Effect.provide(system))
      expect(NodeFs.existsSync(root)).toBe(false)
      expect(NodeFs.existsSync("/elsewhere")).toBe(false)
    })
  )
})
