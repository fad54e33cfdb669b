/**
 * The LocalFs contract, the same cases over every layer (test/fs/layers.ts): native on a local
 * mount (synchronous calls), native with no local mount (the thread pool, as on a network
 * mount), and the platform layer over effect's FileSystem.
 */
import { execFileSync } from "node:child_process"
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { type DerivedSpec, LocalFs } from "../../src/fs/local-fs.ts"
import { makeNativeFs } from "../../src/fs/native.ts"
import { FS_MODES, nodeWith } from "./layers.ts"

const withDir = <A, E, R>(f: (dir: string) => Effect.Effect<A, E, R>) =>
  Effect.acquireUseRelease(
    Effect.sync(() => mkdtempSync(join(tmpdir(), "freecode-localfs-"))),
    f,
    (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
  )

for (const mode of FS_MODES) {
  describe(`LocalFs (${mode})`, () => {
    const layer = nodeWith(mode)

    it.live("readWhole is a fast path only where the layer has one", () =>
      withDir((dir) =>
        Effect.gen(function* () {
          const fs = yield* LocalFs
          writeFileSync(join(dir, "a.txt"), "hello\n")
          const whole = fs.readWhole(join(dir, "a.txt"), 1024)
          expect(whole === undefined).toBe(mode === "pool")
          if (whole === undefined) return
          const file = yield* whole
          expect(file.stats).toMatchObject({ type: "File", size: 6 })
          expect(new TextDecoder().decode(file.bytes)).toBe("hello\n")
          // At the limit, or not a regular file: no bytes, the stats still.
          expect((yield* fs.readWhole(join(dir, "a.txt"), 6)!).bytes).toBeUndefined()
          const asDir = yield* fs.readWhole(dir, 1024)!
          expect(asDir.stats.type).toBe("Directory")
          expect(asDir.bytes).toBeUndefined()
        })
      ).pipe(Effect.provide(layer))
    )

    it.live("realPath follows a symlink; a missing path is NotFound", () =>
      withDir((dir) =>
        Effect.gen(function* () {
          const fs = yield* LocalFs
          mkdirSync(join(dir, "real"))
          symlinkSync(join(dir, "real"), join(dir, "link"))
          const real = yield* fs.realPath(dir)
          expect(yield* fs.realPath(join(dir, "link"))).toBe(join(real, "real"))
          const missing = yield* Effect.flip(fs.realPath(join(dir, "nope")))
          expect(missing.reason._tag).toBe("NotFound")
        })
      ).pipe(Effect.provide(layer))
    )

    it.live(
      "stat follows a link to what it names, with its type and owner; a missing path or a link to nothing is NotFound",
      () =>
        withDir((dir) =>
          Effect.gen(function* () {
            const fs = yield* LocalFs
            writeFileSync(join(dir, "a.txt"), "a")
            symlinkSync(join(dir, "a.txt"), join(dir, "to-file"))
            symlinkSync(join(dir, "nope"), join(dir, "dangling"))
            const uid = process.getuid?.()
            expect(yield* fs.stat(join(dir, "to-file"))).toEqual({ type: "File", owner: uid })
            expect(yield* fs.stat(dir)).toEqual({ type: "Directory", owner: uid })
            expect((yield* Effect.flip(fs.stat(join(dir, "nope")))).reason._tag).toBe("NotFound")
            expect((yield* Effect.flip(fs.stat(join(dir, "dangling")))).reason._tag).toBe("NotFound")
          })
        ).pipe(Effect.provide(layer))
    )

    it.live("linkFreeBelow is true only when it knows: no link, nothing missing", () =>
      withDir((dir) =>
        Effect.gen(function* () {
          const fs = yield* LocalFs
          const base = yield* fs.realPath(dir)
          mkdirSync(join(base, "a"))
          writeFileSync(join(base, "a/f"), "x")
          symlinkSync(join(base, "a"), join(base, "l"))
          // Only the native layer on a local mount can tell cheaply; the others always defer.
          expect(fs.linkFreeBelow(base, join(base, "a/f"))).toBe(mode === "native")
          expect(fs.linkFreeBelow(base, join(base, "l/f"))).toBe(false)
          expect(fs.linkFreeBelow(base, join(base, "a/missing"))).toBe(false)
        })
      ).pipe(Effect.provide(layer))
    )

    it.live("openForReading reads a file in pieces, with its type and size", () =>
      withDir((dir) =>
        Effect.gen(function* () {
          const fs = yield* LocalFs
          writeFileSync(join(dir, "a.txt"), "hello, world\n")
          const text = yield* Effect.scoped(
            Effect.gen(function* () {
              const file = yield* fs.openForReading(join(dir, "a.txt"))
              expect(file.stats).toMatchObject({ type: "File", size: 13 })
              expect(file.stats.mtimeMs).toBeGreaterThan(0)
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
      ).pipe(Effect.provide(layer))
    )

    it.live("a FIFO opens at once, with no writer, and says what it is", () =>
      withDir((dir) =>
        Effect.gen(function* () {
          const fs = yield* LocalFs
          execFileSync("mkfifo", [join(dir, "pipe")])
          const type = yield* Effect.scoped(Effect.map(fs.openForReading(join(dir, "pipe")), (f) => f.stats.type))
          expect(type).toBe("FIFO")
          const missing = yield* Effect.flip(Effect.scoped(fs.openForReading(join(dir, "nope"))))
          expect(missing.reason._tag).toBe("NotFound")
        })
      ).pipe(Effect.provide(layer))
    )

    it.live("readDirectory gives each entry's type, sorted by name; a missing one is NotFound", () =>
      withDir((dir) =>
        Effect.gen(function* () {
          const fs = yield* LocalFs
          writeFileSync(join(dir, "f.txt"), "x")
          writeFileSync(join(dir, "Zed"), "x")
          mkdirSync(join(dir, "sub"))
          symlinkSync("f.txt", join(dir, "ln"))
          const entries = yield* fs.readDirectory(dir)
          // By UTF-16 code unit: upper case before lower case, not a locale's order.
          expect(entries).toEqual([
            { name: "Zed", type: "File" },
            { name: "f.txt", type: "File" },
            { name: "ln", type: "SymbolicLink" },
            { name: "sub", type: "Directory" }
          ])
          const notDir = yield* Effect.flip(fs.readDirectory(join(dir, "f.txt")))
          expect(notDir._tag).toBe("PlatformError")
          const missing = yield* Effect.flip(fs.readDirectory(join(dir, "missing")))
          expect(missing.reason._tag).toBe("NotFound")
        })
      ).pipe(Effect.provide(layer))
    )

    it.live("readFile and readDerived read a file; readDerived is undefined for none or a directory", () =>
      withDir((dir) =>
        Effect.gen(function* () {
          const fs = yield* LocalFs
          writeFileSync(join(dir, "rules"), "a\nb\n")
          mkdirSync(join(dir, "sub"))
          mkdirSync(join(dir, "sub/rules"))
          expect(new TextDecoder().decode(yield* fs.readFile(join(dir, "rules")))).toBe("a\nb\n")
          const spec: DerivedSpec<string> = { name: "test", derive: (d, text) => `${d}:${text.length}`, maxPaths: 10 }
          expect(yield* fs.readDerived(dir, "rules", spec)).toBe(`${dir}:4`)
          expect(yield* fs.readDerived(dir, "nope", spec)).toBeUndefined()
          expect(yield* fs.readDerived(join(dir, "sub"), "rules", spec)).toBeUndefined()
        })
      ).pipe(Effect.provide(layer))
    )
  })
}

describe("the native layer's caches belong to the layer", () => {
  it.live("a settled directory's listing is kept by one instance and not seen by another", () =>
    withDir((dir) =>
      Effect.gen(function* () {
        writeFileSync(join(dir, "a"), "x")
        // A clock a minute ahead: the directory is settled (past the racy window).
        const later = () => Date.now() + 60_000
        const one = makeNativeFs({ now: later })
        const two = makeNativeFs({ now: later })
        const first = yield* one.readDirectory(dir)
        expect(yield* one.readDirectory(dir)).toBe(first)
        expect(yield* two.readDirectory(dir)).not.toBe(first)
        expect(yield* two.readDirectory(dir)).toEqual(first)
      })
    )
  )
})
