import { spawn } from "node:child_process"
import * as NodePath from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Effect, FileSystem, Layer } from "effect"
import { joinPath } from "../../src/path/path.ts"
import { DEDUP_POINTER, dedupPointer, ReadState } from "../../src/read-state/read-state.ts"
import { EditTool } from "../../src/tools/edit.ts"
import { ReadTool } from "../../src/tools/read.ts"
import { WriteTool } from "../../src/tools/write.ts"
import { ctxFor, layer, project } from "../edit/helpers.ts"
import { nodeLayer } from "../fs/layers.ts"
import { run } from "../tools/helpers.ts"

const content = "alpha\nbeta\ngamma\n"
const REPO = NodePath.resolve(import.meta.dirname, "../..")

describe("read de-duplication", () => {
  it.live("an identical re-read of the same window is answered with the pointer", () =>
    Effect.gen(function* () {
      const root = yield* project({ "f.txt": content })
      const firstCall = ctxFor(root)
      const first = yield* run(ReadTool, { filePath: "f.txt" }, firstCall)
      expect(first.output).toBe("1\talpha\n2\tbeta\n3\tgamma")
      const again = yield* run(ReadTool, { filePath: "f.txt" }, ctxFor(root))
      // The pointer names the call whose result holds the content.
      expect(again.output).toBe(dedupPointer(firstCall.callId))
      expect(again.metadata).toMatchObject({ unchanged: true })
      // Another window, or another session, gets the content.
      const window = yield* run(ReadTool, { filePath: "f.txt", offset: 2 }, ctxFor(root))
      expect(window.output).toBe("2\tbeta\n3\tgamma")
      const other = yield* run(ReadTool, { filePath: "f.txt" }, ctxFor(root, "s2"))
      expect(other.output).toBe("1\talpha\n2\tbeta\n3\tgamma")
    }).pipe(Effect.provide(layer))
  )

  it.live("a changed file is sent again, even when size and mtime are unchanged", () =>
    Effect.gen(function* () {
      const fs = yield* FileSystem.FileSystem
      const root = yield* project({ "f.txt": content })
      const path = joinPath(root, "f.txt")
      yield* run(ReadTool, { filePath: "f.txt" }, ctxFor(root))
      const info = yield* fs.stat(path)
      yield* fs.writeFileString(path, "alpha\nBETA\ngamma\n")
      const mtime = info.mtime._tag === "Some" ? info.mtime.value : new Date()
      yield* fs.utimes(path, mtime, mtime)
      const again = yield* run(ReadTool, { filePath: "f.txt" }, ctxFor(root))
      expect(again.output).toBe("1\talpha\n2\tBETA\n3\tgamma")
    }).pipe(Effect.provide(layer))
  )

  it.live("a changed mtime alone is enough to send the file again (mtime AND size AND hash must match)", () =>
    Effect.gen(function* () {
      const fs = yield* FileSystem.FileSystem
      const root = yield* project({ "f.txt": content })
      yield* run(ReadTool, { filePath: "f.txt" }, ctxFor(root))
      const later = new Date(Date.now() + 60_000)
      yield* fs.utimes(joinPath(root, "f.txt"), later, later)
      const again = yield* run(ReadTool, { filePath: "f.txt" }, ctxFor(root))
      expect(again.output).toBe("1\talpha\n2\tbeta\n3\tgamma")
      // Nothing changed since that read: now it is a duplicate.
      const third = yield* run(ReadTool, { filePath: "f.txt" }, ctxFor(root))
      expect(third.output).toContain(DEDUP_POINTER)
    }).pipe(Effect.provide(layer))
  )

  it.live("records made by edit and write never answer a dedup", () =>
    Effect.gen(function* () {
      const root = yield* project({ "f.txt": content })
      yield* run(ReadTool, { filePath: "f.txt" }, ctxFor(root))
      yield* run(EditTool, { filePath: "f.txt", oldString: "beta", newString: "BETA" }, ctxFor(root))
      const afterEdit = yield* run(ReadTool, { filePath: "f.txt" }, ctxFor(root))
      expect(afterEdit.output).toBe("1\talpha\n2\tBETA\n3\tgamma")
      yield* run(WriteTool, { filePath: "n.txt", content: "new\n" }, ctxFor(root))
      const afterWrite = yield* run(ReadTool, { filePath: "n.txt" }, ctxFor(root))
      expect(afterWrite.output).toBe("1\tnew")
      // Even an edit that restores the text the model once read does not let dedup point at it.
      yield* run(EditTool, { filePath: "f.txt", oldString: "BETA", newString: "beta" }, ctxFor(root))
      const restored = yield* run(ReadTool, { filePath: "f.txt" }, ctxFor(root))
      expect(restored.output).toBe("1\talpha\n2\tbeta\n3\tgamma")
    }).pipe(Effect.provide(layer))
  )

  it.live("markReadPruned stops dedup from pointing at a copy that left the conversation", () =>
    Effect.gen(function* () {
      const root = yield* project({ "f.txt": content })
      const ctx = ctxFor(root)
      yield* run(ReadTool, { filePath: "f.txt" }, ctx)
      const readState = yield* ReadState
      yield* readState.markReadPruned(ctx.sessionId, ctx.callId)
      const again = yield* run(ReadTool, { filePath: "f.txt" }, ctxFor(root))
      expect(again.output).toBe("1\talpha\n2\tbeta\n3\tgamma")
      // That new copy is in context: the next identical read points at it.
      const third = yield* run(ReadTool, { filePath: "f.txt" }, ctxFor(root))
      expect(third.output).toContain(DEDUP_POINTER)
      // Unknown ids are ignored.
      yield* readState.markReadPruned("nobody", "nothing")
    }).pipe(Effect.provide(layer))
  )

  it.live("FREECODE_READ_DEDUP=0 turns dedup off, through Effect Config", () =>
    Effect.gen(function* () {
      const root = yield* project({ "f.txt": content })
      yield* run(ReadTool, { filePath: "f.txt" }, ctxFor(root))
      const again = yield* run(ReadTool, { filePath: "f.txt" }, ctxFor(root))
      expect(again.output).toBe("1\talpha\n2\tbeta\n3\tgamma")
      expect((yield* ReadState).dedup).toBe(false)
    }).pipe(
      Effect.provide(
        Layer.merge(
          nodeLayer,
          ReadState.layer.pipe(
            Layer.provide(ConfigProvider.layer(ConfigProvider.fromEnv({ env: { FREECODE_READ_DEDUP: "0" } })))
          )
        )
      )
    )
  )

  it.live(
    "FREECODE_READ_DEDUP=0 in the environment of the real CLI sends the second read in full",
    () =>
      Effect.gen(function* () {
        const root = yield* project({ "f.txt": content })
        const turns = `${JSON.stringify([{ id: "a", name: "read", args: { filePath: "f.txt" } }])}\n${JSON.stringify([{ id: "b", name: "read", args: { filePath: "f.txt" } }])}\n`
        yield* (yield* FileSystem.FileSystem).writeFileString(joinPath(root, "turns.jsonl"), turns)
        const secondRead = (env: Record<string, string>) =>
          Effect.promise(
            () =>
              new Promise<string>((resolve, reject) => {
                const child = spawn(
                  process.execPath,
                  [NodePath.join(REPO, "src/cli/main.ts"), "run", joinPath(root, "turns.jsonl"), "--root", root],
                  { cwd: REPO, env: { ...process.env, ...env } }
                )
                let out = ""
                child.stdout.on("data", (b: Buffer) => (out += b.toString()))
                child.on("error", reject)
                child.on("close", () => resolve(JSON.parse(out.trim().split("\n")[1]!).modelOutput))
              })
          )
        expect(yield* secondRead({ FREECODE_READ_DEDUP: "1" })).toContain(DEDUP_POINTER)
        expect(yield* secondRead({ FREECODE_READ_DEDUP: "0" })).toBe("1\talpha\n2\tbeta\n3\tgamma")
      }).pipe(Effect.provide(layer)),
    60_000
  )

  it.live("dedup is on when FREECODE_READ_DEDUP is unset", () =>
    Effect.gen(function* () {
      expect((yield* ReadState).dedup).toBe(true)
    }).pipe(
      Effect.provide(ReadState.layer.pipe(Layer.provide(ConfigProvider.layer(ConfigProvider.fromEnv({ env: {} })))))
    )
  )
})
