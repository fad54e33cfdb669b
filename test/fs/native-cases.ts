/**
 * The same checks of src/fs/native.ts for both of its modes: synchronous calls on a local mount,
 * and the thread pool (forced with FREECODE_FS_POOL=1, as on a network mount).
 */
import { execFileSync } from "node:child_process"
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { isOnLocalMount } from "../../src/fs/local-mounts.ts"
import * as NativeFs from "../../src/fs/native.ts"

export const nativeCases = (mode: "local" | "pool") =>
  describe(`native fs (${mode})`, () => {
    const withDir = <A, E>(f: (dir: string) => Effect.Effect<A, E>) =>
      Effect.acquireUseRelease(
        Effect.sync(() => mkdtempSync(join(tmpdir(), "freecode-native-"))),
        f,
        (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
      )

    it.live("takes the mode it is meant to", () =>
      withDir((dir) => Effect.sync(() => expect(isOnLocalMount(dir)).toBe(mode === "local")))
    )

    it.live("realPath follows a symlink; a missing path is NotFound", () =>
      withDir((dir) =>
        Effect.gen(function* () {
          mkdirSync(join(dir, "real"))
          symlinkSync(join(dir, "real"), join(dir, "link"))
          const real = yield* NativeFs.realPath(dir)
          expect(yield* NativeFs.realPath(join(dir, "link"))).toBe(join(real, "real"))
          const missing = yield* Effect.flip(NativeFs.realPath(join(dir, "nope")))
          expect(missing.reason._tag).toBe("NotFound")
        })
      )
    )

    it.live("openForReading reads a file in pieces, with its type and size", () =>
      withDir((dir) =>
        Effect.gen(function* () {
          writeFileSync(join(dir, "a.txt"), "hello, world\n")
          const text = yield* Effect.scoped(
            Effect.gen(function* () {
              const file = yield* NativeFs.openForReading(join(dir, "a.txt"))
              expect(file.type).toBe("File")
              expect(file.stats.size).toBe(13)
              const head = new Uint8Array(5)
              const rest = new Uint8Array(64)
              const n1 = yield* file.read(head, 0)
              const n2 = yield* file.read(rest, 5)
              expect(yield* file.read(rest, 13)).toBe(0)
              return Buffer.concat([head.subarray(0, n1), rest.subarray(0, n2)]).toString()
            })
          )
          expect(text).toBe("hello, world\n")
        })
      )
    )

    it.live("a FIFO opens at once, with no writer, and says what it is", () =>
      withDir((dir) =>
        Effect.gen(function* () {
          execFileSync("mkfifo", [join(dir, "pipe")])
          const type = yield* Effect.scoped(Effect.map(NativeFs.openForReading(join(dir, "pipe")), (f) => f.type))
          expect(type).toBe("FIFO")
          const missing = yield* Effect.flip(Effect.scoped(NativeFs.openForReading(join(dir, "nope"))))
          expect(missing.reason._tag).toBe("NotFound")
        })
      )
    )

    it.live("readDirectoryEntries gives each entry's type, sorted by name; a file is BadResource", () =>
      withDir((dir) =>
        Effect.gen(function* () {
          writeFileSync(join(dir, "f.txt"), "x")
          writeFileSync(join(dir, "Zed"), "x")
          mkdirSync(join(dir, "sub"))
          symlinkSync("f.txt", join(dir, "ln"))
          const entries = yield* NativeFs.readDirectoryEntries(dir)
          // By UTF-16 code unit: upper case before lower case, not a locale's order.
          expect(entries).toEqual([
            { name: "Zed", type: "File" },
            { name: "f.txt", type: "File" },
            { name: "ln", type: "SymbolicLink" },
            { name: "sub", type: "Directory" }
          ])
          const notDir = yield* Effect.flip(NativeFs.readDirectoryEntries(join(dir, "f.txt")))
          expect(notDir.reason._tag).toBe("BadResource")
          const missing = yield* Effect.flip(NativeFs.readDirectoryEntries(join(dir, "missing")))
          expect(missing.reason._tag).toBe("NotFound")
        })
      )
    )
  })
