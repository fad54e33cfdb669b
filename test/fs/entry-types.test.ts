/**
 * A listing from a file system that reports no entry types: each untyped entry gets one lstat,
 * typed ones none, and an entry whose lstat fails is still listed, untyped. The platform layer
 * over such a FileSystem lists the same types as the native layer over the real disk.
 */
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { NodeServices } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Effect, FileSystem, Layer } from "effect"
import { fillUnknownTypes } from "../../src/fs/entry-types.ts"
import { type DirectoryEntry, type FileType, LocalFs } from "../../src/fs/local-fs.ts"
import { nodeWith } from "./layers.ts"

const withDir = <A, E, R>(f: (dir: string) => Effect.Effect<A, E, R>) =>
  Effect.acquireUseRelease(
    Effect.sync(() => {
      const dir = mkdtempSync(join(tmpdir(), "freecode-entry-types-"))
      writeFileSync(join(dir, "file"), "x")
      mkdirSync(join(dir, "sub"))
      symlinkSync(join(dir, "file"), join(dir, "link"))
      return dir
    }),
    f,
    (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
  )

const REAL: ReadonlyArray<DirectoryEntry> = [
  { name: "file", type: "File" },
  { name: "link", type: "SymbolicLink" },
  { name: "sub", type: "Directory" }
]

describe("fillUnknownTypes", () => {
  it.effect("lstats only the untyped entries; a failed lstat leaves the entry listed, Unknown", () =>
    Effect.gen(function* () {
      const asked: Array<string> = []
      const types: Record<string, FileType> = { "/d/a": "File", "/d/c": "Directory" }
      const lstat = (path: string) => {
        asked.push(path)
        const type = types[path]
        return type === undefined ? Effect.fail("gone") : Effect.succeed(type)
      }
      const entries: ReadonlyArray<DirectoryEntry> = [
        { name: "a", type: "Unknown" },
        { name: "b", type: "FIFO" },
        { name: "c", type: "Unknown" },
        { name: "gone", type: "Unknown" }
      ]
      expect(yield* fillUnknownTypes("/d", entries, lstat)).toEqual([
        { name: "a", type: "File" },
        { name: "b", type: "FIFO" },
        { name: "c", type: "Directory" },
        { name: "gone", type: "Unknown" }
      ])
      expect(asked.sort()).toEqual(["/d/a", "/d/c", "/d/gone"])
      // All typed (the usual case): the same array back, no lstat at all.
      asked.length = 0
      const typed = entries.filter((e) => e.type !== "Unknown")
      expect(yield* fillUnknownTypes("/d/", typed, lstat)).toBe(typed)
      expect(asked).toEqual([])
    })
  )

  it.live("the platform layer over a FileSystem that reports no types lists what native lists", () =>
    withDir((dir) =>
      Effect.gen(function* () {
        const native = yield* LocalFs.use((fs) => fs.readDirectory(dir)).pipe(Effect.provide(nodeWith("native")))
        expect(native).toEqual(REAL)
        const untyped = Layer.effect(
          FileSystem.FileSystem,
          Effect.map(
            FileSystem.FileSystem,
            (fs): FileSystem.FileSystem => ({
              ...fs,
              readDirectoryEntries: (path) =>
                Effect.map(fs.readDirectoryEntries(path), (entries) =>
                  entries.map((e) => ({ name: e.name, type: "Unknown" as const }))
                )
            })
          )
        ).pipe(Layer.provide(NodeServices.layer))
        const platform = yield* LocalFs.use((fs) => fs.readDirectory(dir)).pipe(
          Effect.provide(LocalFs.layerPlatform.pipe(Layer.provide(untyped)))
        )
        expect(platform).toEqual(REAL)
      })
    )
  )
})
