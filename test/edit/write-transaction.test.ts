/**
 * WriteFs.transaction: a write's stale check (ReadState.lastSeen) and its record
 * (recordWrite, forget) run while ReadState.withPathLock holds the file's path, for every write
 * tool over both WriteFs layers — the one call a store shared by replicas serializes. And the
 * in-process lock itself: one path one at a time, different paths together, nothing left over.
 */
import { NodeServices } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Layer, Option } from "effect"
import { WriteFs } from "../../src/edit/write-fs.ts"
import { LocalFs } from "../../src/fs/local-fs.ts"
import { MemoryFileSystem } from "../../src/fs/memory.ts"
import { pathLocks, ReadState } from "../../src/read-state/read-state.ts"
import { ApplyPatchTool } from "../../src/tools/apply-patch.ts"
import { EditTool } from "../../src/tools/edit.ts"
import { ReadTool } from "../../src/tools/read.ts"
import { WriteTool } from "../../src/tools/write.ts"
import { run } from "../tools/helpers.ts"
import { ctxFor, project } from "./helpers.ts"

/** A ReadState that notes, for each stale check and record, whether its path's lock was held. */
const watched = (held: Set<string>, outside: Array<string>) =>
  Layer.effect(
    ReadState,
    Effect.gen(function* () {
      const inner = yield* ReadState
      const check = (what: string, path: string) =>
        Effect.sync(() => {
          // The lock is keyed by where the write lands; in these projects that is the path itself.
          if (!held.has(path)) outside.push(`${what} ${path}`)
        })
      return ReadState.of({
        ...inner,
        withPathLock: (path, effect) =>
          inner.withPathLock(
            path,
            Effect.acquireUseRelease(
              Effect.sync(() => held.add(path)),
              () => effect,
              () => Effect.sync(() => held.delete(path))
            )
          ),
        lastSeen: (sessionId, path) => Effect.andThen(check("lastSeen", path), inner.lastSeen(sessionId, path)),
        recordWrite: (sessionId, path, view, by, known) =>
          Effect.andThen(check("recordWrite", path), inner.recordWrite(sessionId, path, view, by, known)),
        forget: (sessionId, path) => Effect.andThen(check("forget", path), inner.forget(sessionId, path))
      })
    })
  ).pipe(Layer.provide(ReadState.layerWith({ dedup: true })))

const setups = [
  {
    name: "native, on disk",
    make: Effect.gen(function* () {
      const root = yield* project({ "a.txt": "one\n", "b.txt": "two\n" }).pipe(Effect.provide(NodeServices.layer))
      return {
        root,
        files: Layer.merge(LocalFs.layerNative, WriteFs.layerNative).pipe(Layer.provideMerge(NodeServices.layer))
      }
    })
  },
  {
    name: "platform, in memory",
    make: Effect.succeed({
      root: "/tx",
      files: Layer.merge(LocalFs.layerPlatform, WriteFs.layerPlatform).pipe(
        Layer.provideMerge(MemoryFileSystem.layer({ "/tx/a.txt": "one\n", "/tx/b.txt": "two\n" }))
      )
    })
  }
]

describe.each(setups)("a write's stale check and record run under ReadState.withPathLock: $name", (setup) => {
  it.live("write, edit and apply_patch: every lastSeen, recordWrite and forget inside the lock", () =>
    Effect.gen(function* () {
      const { root, files } = yield* setup.make
      const held = new Set<string>()
      const outside: Array<string> = []
      const ctx = ctxFor(root)
      yield* Effect.gen(function* () {
        yield* run(ReadTool, { filePath: "a.txt" }, ctx)
        yield* run(WriteTool, { filePath: "a.txt", content: "uno\n" }, ctx)
        yield* run(EditTool, { filePath: "a.txt", oldString: "uno", newString: "eins" }, ctx)
        yield* run(EditTool, { filePath: "new/c.txt", oldString: "", newString: "three\n" }, ctx)
        yield* run(
          ApplyPatchTool,
          {
            patchText: [
              "*** Begin Patch",
              "*** Update File: b.txt",
              "*** Move to: d.txt",
              "@@",
              "-two",
              "+zwei",
              "*** Delete File: new/c.txt",
              "*** End Patch"
            ].join("\n")
          },
          ctx
        )
        outside.push("(the test's own checks below)")
        const state = yield* ReadState
        // What was recorded is what the files now hold: the writes did record, under the lock.
        expect((yield* state.lastSeen("s1", `${root}/d.txt`))?.by).toBe("apply_patch")
        expect(yield* state.lastSeen("s1", `${root}/b.txt`)).toBeUndefined()
        expect(yield* state.lastSeen("s1", `${root}/new/c.txt`)).toBeUndefined()
        expect((yield* state.lastSeen("s1", `${root}/a.txt`))?.by).toBe("edit")
      }).pipe(Effect.provide(Layer.merge(files, watched(held, outside))))
      expect(outside.slice(0, outside.indexOf("(the test's own checks below)"))).toEqual([])
      expect(held.size).toBe(0)
      expect(pathLocks.get().size()).toBe(0)
    }).pipe(Effect.scoped)
  )
})

describe("ReadState.withPathLock (in process)", () => {
  it.live("one path one holder at a time; different paths together; no entry left", () =>
    Effect.gen(function* () {
      const state = yield* ReadState
      let inside = 0
      let most = 0
      const hold = (path: string) =>
        state.withPathLock(
          path,
          Effect.gen(function* () {
            inside++
            most = Math.max(most, inside)
            yield* Effect.yieldNow
            yield* Effect.yieldNow
            inside--
          })
        )
      yield* Effect.all(
        Array.from({ length: 10 }, () => hold("/p/a")),
        { concurrency: "unbounded" }
      )
      expect(most).toBe(1)
      // /p/a is held until /p/b's holder has run: it can only if /p/b does not queue behind /p/a.
      const bRan = yield* Deferred.make<void>()
      const together = yield* Effect.all(
        [
          state.withPathLock("/p/a", Deferred.await(bRan)),
          state.withPathLock("/p/b", Deferred.succeed(bRan, undefined))
        ],
        { concurrency: "unbounded" }
      ).pipe(Effect.timeoutOption("10 seconds"))
      expect(Option.isSome(together)).toBe(true)
      expect(pathLocks.get().size()).toBe(0)
    }).pipe(Effect.provide(ReadState.layerWith({ dedup: true })))
  )
})
