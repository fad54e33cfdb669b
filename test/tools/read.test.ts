import { execFileSync } from "node:child_process"
import { describe, expect, it } from "@effect/vitest"
import { Effect, FileSystem, Layer, Result } from "effect"
import { LocalFs } from "../../src/fs/local-fs.ts"
import { joinPath } from "../../src/path/path.ts"
import { ReadState } from "../../src/read-state/read-state.ts"
import { wholeText } from "../../src/tools/read/text.ts"
import { ReadTool } from "../../src/tools/read.ts"
import { FS_MODES, type FsMode, nodeWith } from "../fs/layers.ts"
import { makeCtx, run, runFailure, writeTree } from "./helpers.ts"

/** A temp project with `tree` in it. */
const project = (tree: Readonly<Record<string, string | Uint8Array | null>> = {}) =>
  Effect.gen(function* () {
    const fs = yield* FileSystem.FileSystem
    const root = yield* fs.makeTempDirectoryScoped({ prefix: "freecode-read-" })
    yield* writeTree(root, tree)
    return root
  })

const numberedFile = (n: number, trailingNewline = true) =>
  Array.from({ length: n }, (_, i) => `line ${i + 1}`).join("\n") + (trailingNewline ? "\n" : "")

// A 1×1 transparent PNG.
const PNG = Uint8Array.from(
  atob("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="),
  (c) => c.charCodeAt(0)
)

/**
 * The read tool's checks over every LocalFs layer: natively a small file on a local disk is
 * read whole in one synchronous step; with no local mount (as on a network mount) it is opened
 * and streamed through the thread pool; the platform layer reads through effect's FileSystem.
 */
const readCases = (mode: FsMode) =>
  describe(`read (${mode})`, () => {
    const layer = Layer.merge(nodeWith(mode), ReadState.layerWith({ dedup: true }))

    it.live("takes the path it is meant to", () =>
      Effect.gen(function* () {
        const root = yield* project({ "a.txt": "x\n" })
        const fs = yield* LocalFs
        expect(fs.readWhole(joinPath(root, "a.txt"), 1024) === undefined).toBe(mode === "pool")
      }).pipe(Effect.provide(layer))
    )

    it.live("numbers lines: number right-aligned to the widest shown, a tab, the text", () =>
      Effect.gen(function* () {
        const root = yield* project({ "a.txt": numberedFile(12) })
        const out = yield* run(ReadTool, { filePath: "a.txt" }, makeCtx(root))
        const lines = out.output.split("\n")
        expect(lines).toHaveLength(12)
        expect(lines[0]).toBe(" 1\tline 1")
        expect(lines[11]).toBe("12\tline 12")
        expect(out.metadata).toMatchObject({ path: joinPath(root, "a.txt"), totalLines: 12, startLine: 1, endLine: 12 })
      }).pipe(Effect.provide(layer))
    )

    it.live("reads a window from offset and says how to continue", () =>
      Effect.gen(function* () {
        const root = yield* project({ "a.txt": numberedFile(10) })
        const out = yield* run(ReadTool, { filePath: "a.txt", offset: 3, limit: 4 }, makeCtx(root))
        expect(out.output.split("\n")).toEqual([
          "3\tline 3",
          "4\tline 4",
          "5\tline 5",
          "6\tline 6",
          "(Showing lines 3-6 of 10. Use offset=7 to continue.)"
        ])
        expect(out.metadata).toMatchObject({ totalLines: 10, startLine: 3, endLine: 6, more: true })

        const tail = yield* run(ReadTool, { filePath: "a.txt", offset: 8 }, makeCtx(root))
        expect(tail.output).toBe(" 8\tline 8\n 9\tline 9\n10\tline 10")
      }).pipe(Effect.provide(layer))
    )

    it.live("shows 2,000 lines by default and honours a larger explicit limit", () =>
      Effect.gen(function* () {
        const root = yield* project({ "big.txt": numberedFile(2500) })
        const ctx = makeCtx(root)
        const def = yield* run(ReadTool, { filePath: "big.txt" }, ctx)
        const lines = def.output.split("\n")
        expect(lines).toHaveLength(2001)
        expect(lines[1999]).toBe("2000\tline 2000")
        expect(lines[2000]).toBe("(Showing lines 1-2000 of 2500. Use offset=2001 to continue.)")

        const all = yield* run(ReadTool, { filePath: "big.txt", limit: 3000 }, ctx)
        const allLines = all.output.split("\n")
        expect(allLines).toHaveLength(2500)
        expect(allLines[2499]).toBe("2500\tline 2500")
        expect(all.metadata).toMatchObject({ totalLines: 2500, endLine: 2500, more: false })
      }).pipe(Effect.provide(layer))
    )

    it.live("counts every line of a file much larger than the window (last line without newline too)", () =>
      Effect.gen(function* () {
        const root = yield* project({ "huge.txt": numberedFile(100_000, false), "crlf.txt": "a\r\nb\r\n" })
        const ctx = makeCtx(root)
        const out = yield* run(ReadTool, { filePath: "huge.txt", offset: 99_998, limit: 2 }, ctx)
        expect(out.output.split("\n")).toEqual([
          "99998\tline 99998",
          "99999\tline 99999",
          "(Showing lines 99998-99999 of 100000. Use offset=100000 to continue.)"
        ])
        const head = yield* run(ReadTool, { filePath: "huge.txt", limit: 1 }, ctx)
        expect(head.metadata).toMatchObject({ totalLines: 100_000, endLine: 1 })
        const crlf = yield* run(ReadTool, { filePath: "crlf.txt" }, ctx)
        expect(crlf.output).toBe("1\ta\n2\tb")
      }).pipe(Effect.provide(layer))
    )

    it.live("cuts lines over 2,000 chars and says how many chars were dropped", () =>
      Effect.gen(function* () {
        const root = yield* project({ "long.txt": `short\n${"x".repeat(2500)}\nend\n` })
        const out = yield* run(ReadTool, { filePath: "long.txt" }, makeCtx(root))
        const lines = out.output.split("\n")
        expect(lines[1]).toBe(`2\t${"x".repeat(2000)}… [500 chars cut]`)
        expect(lines[2]).toBe("3\tend")
        expect(out.metadata).toMatchObject({ cutLines: 1 })
      }).pipe(Effect.provide(layer))
    )

    it.live(
      "says whether the file ends with a newline once the window reaches its end; wholeText gives the file back",
      () =>
        Effect.gen(function* () {
          const files = {
            "nl.txt": numberedFile(3),
            "bare.txt": numberedFile(3, false),
            "crlf.txt": "a\r\nb\r\n",
            "mixed.txt": "a\r\nb\n",
            "crEnd.txt": "a\r\nb\r",
            "long.txt": `${"x".repeat(2500)}\n`
          }
          const root = yield* project(files)
          const ctx = makeCtx(root)
          const read = (args: { filePath: string; offset?: number; limit?: number }) => run(ReadTool, args, ctx)
          const [nl, bare, exact, bareExact, part, crlf, long] = [
            yield* read({ filePath: "nl.txt" }),
            yield* read({ filePath: "bare.txt" }),
            // A window that fills exactly at the last line: the rest is only counted.
            yield* read({ filePath: "nl.txt", limit: 3 }),
            yield* read({ filePath: "bare.txt", limit: 3 }),
            yield* read({ filePath: "nl.txt", limit: 2 }),
            yield* read({ filePath: "crlf.txt" }),
            yield* read({ filePath: "long.txt" })
          ]
          expect([nl, bare, exact, bareExact].map((r) => r.metadata?.finalNewline)).toEqual([true, false, true, false])
          expect(part.metadata).not.toHaveProperty("finalNewline")
          const whole = (r: typeof nl) => wholeText(r.output, r.metadata ?? {})
          expect([whole(nl), whole(bare), whole(exact), whole(bareExact)]).toEqual([
            files["nl.txt"],
            files["bare.txt"],
            files["nl.txt"],
            files["bare.txt"]
          ])
          // Not the whole file, or not exactly it: nothing rather than a window passed off as the file.
          expect([whole(part), whole(long)]).toEqual([undefined, undefined])
          // read shows no "\r"; write puts a CRLF file's line ends back, but not a mixed file's.
          expect(whole(crlf)).toBe("a\nb\n")
          expect(whole(yield* read({ filePath: "mixed.txt" }))).toBeUndefined()
          expect(whole(yield* read({ filePath: "crEnd.txt" }))).toBeUndefined()
        }).pipe(Effect.provide(layer))
    )

    it.live("an offset past the end is an error naming the line count", () =>
      Effect.gen(function* () {
        const root = yield* project({ "a.txt": numberedFile(5) })
        const message = yield* runFailure(ReadTool, { filePath: "a.txt", offset: 9 }, makeCtx(root))
        expect(message).toBe("offset 9 is past the end of a.txt: it has 5 lines. Use an offset from 1 to 5.")
      }).pipe(Effect.provide(layer))
    )

    it.live("says when a file is empty", () =>
      Effect.gen(function* () {
        const root = yield* project({ "empty.txt": "" })
        const out = yield* run(ReadTool, { filePath: "empty.txt" }, makeCtx(root))
        expect(out.output).toBe("empty.txt is empty.")
        expect(out.metadata).toMatchObject({ totalLines: 0 })
      }).pipe(Effect.provide(layer))
    )

    it.live("a missing file names up to 3 similarly named files of its directory", () =>
      Effect.gen(function* () {
        const root = yield* project({
          "src/config.ts": "",
          "src/config.test.ts": "",
          "src/Config.json": "",
          "src/confg.ts": "",
          "src/unrelated.md": ""
        })
        const ctx = makeCtx(root)
        const message = yield* runFailure(ReadTool, { filePath: "src/config.js" }, ctx)
        expect(message).toMatch(/^File not found: src\/config\.js\. Did you mean /)
        const suggested = message.replace(/^.*Did you mean (.*)\?$/, "$1").split(", ")
        expect(suggested).toHaveLength(3)
        expect(suggested).toContain("src/config.ts")
        expect(suggested).not.toContain("src/unrelated.md")

        const none = yield* runFailure(ReadTool, { filePath: "src/zzzzzzzz.py" }, ctx)
        expect(none).toBe("File not found: src/zzzzzzzz.py. Use glob or ls to find the right path.")
        const noDir = yield* runFailure(ReadTool, { filePath: "nope/x.ts" }, ctx)
        expect(noDir).toContain("nope/ does not exist either")
      }).pipe(Effect.provide(layer))
    )

    it.live("refuses directories", () =>
      Effect.gen(function* () {
        const root = yield* project({ "src/a.ts": "" })
        const message = yield* runFailure(ReadTool, { filePath: "src" }, makeCtx(root))
        expect(message).toBe("src is a directory; use ls or glob to see what it contains.")
      }).pipe(Effect.provide(layer))
    )

    it.live("refuses a FIFO at once (no writer needed) and a device, without reading them", () =>
      Effect.gen(function* () {
        const root = yield* project({ "src/a.ts": "" })
        execFileSync("mkfifo", [joinPath(root, "pipe")])
        // A blocking open would wait for a writer forever: the timeout turns that into a failure.
        const fifo = yield* runFailure(ReadTool, { filePath: "pipe" }, makeCtx(root)).pipe(Effect.timeout("5 seconds"))
        expect(fifo).toBe("pipe is not a regular file (FIFO); read only reads files.")
        const device = yield* runFailure(ReadTool, { filePath: "/dev/zero" }, makeCtx(root)).pipe(
          Effect.timeout("5 seconds")
        )
        expect(device).toBe("/dev/zero is not a regular file (CharacterDevice); read only reads files.")
      }).pipe(Effect.provide(layer))
    )

    it.live("refuses binary files (NUL in the first 8 KB, or a known binary extension) and says what to use", () =>
      Effect.gen(function* () {
        const root = yield* project({
          "data.bin2": Uint8Array.from([0x68, 0x69, 0x00, 0x01]),
          "archive.zip": "plain text inside a .zip name\n",
          "late-nul.txt": `${"a".repeat(9000)}\u0000\n`
        })
        const ctx = makeCtx(root)
        const nul = yield* runFailure(ReadTool, { filePath: "data.bin2" }, ctx)
        expect(nul).toContain("data.bin2 is a binary file")
        expect(nul).toContain("`file data.bin2`")
        expect(nul).toContain("xxd")
        const zip = yield* runFailure(ReadTool, { filePath: "archive.zip" }, ctx)
        expect(zip).toContain("archive.zip is a binary file (.zip)")
        // A NUL past the first 8 KB does not make a file binary.
        const late = yield* run(ReadTool, { filePath: "late-nul.txt" }, ctx)
        expect(late.metadata).toMatchObject({ totalLines: 1 })
      }).pipe(Effect.provide(layer))
    )

    it.live("refuses an image before touching the file when the model cannot see images", () =>
      Effect.gen(function* () {
        const root = yield* project()
        // The file does not exist: a not-found error would prove the tool looked for it.
        const message = yield* runFailure(ReadTool, { filePath: "screens/shot.PNG" }, makeCtx(root))
        expect(message).toContain("screens/shot.PNG is an image (png) and this model cannot see images")
        expect(message).not.toMatch(/not found/i)
      }).pipe(Effect.provide(layer))
    )

    it.live("image refusal needs no file system (the read is never attempted)", () =>
      Effect.gen(function* () {
        const failure = yield* Effect.flip(
          ReadTool.execute({ filePath: "/definitely/not/here.webp" }, makeCtx("/also/not/here"))
        )
        expect(failure.message).toContain("cannot see images")
      }).pipe(
        // A FileSystem whose every method fails: had the tool looked, it would report not-found.
        Effect.provide(
          Layer.mergeAll(
            LocalFs.layerPlatform.pipe(Layer.provideMerge(FileSystem.layerNoop({}))),
            ReadState.layerWith({ dedup: true })
          )
        )
      )
    )

    it.live("returns an image only in metadata when the model can see images", () =>
      Effect.gen(function* () {
        const root = yield* project({ "img/dot.png": PNG })
        const out = yield* run(ReadTool, { filePath: "img/dot.png" }, makeCtx(root, { canSeeImages: true }))
        expect(out.output).toBe(`Image: img/dot.png (png, ${PNG.length} B)`)
        const image = out.metadata?.image as { mimeType: string; data: string; bytes: number }
        expect(image.mimeType).toBe("image/png")
        expect(image.bytes).toBe(PNG.length)
        expect(Uint8Array.from(atob(image.data), (c) => c.charCodeAt(0))).toEqual(PNG)
        expect(out.output).not.toContain(image.data)
      }).pipe(Effect.provide(layer))
    )

    it.live("refuses images over 10 MB", () =>
      Effect.gen(function* () {
        const root = yield* project({ "big.jpg": "" })
        const fs = yield* FileSystem.FileSystem
        yield* fs.truncate(joinPath(root, "big.jpg"), 11 * 1024 * 1024)
        const message = yield* runFailure(ReadTool, { filePath: "big.jpg" }, makeCtx(root, { canSeeImages: true }))
        expect(message).toContain("big.jpg is an image of 11.0 MB; images over 10.0 MB are not read")
      }).pipe(Effect.provide(layer))
    )

    it("paths resolves filePath against the root; absolute paths are kept", () => {
      const ctx = makeCtx("/proj")
      expect(ReadTool.paths({ filePath: "src/a.ts" }, ctx)).toEqual(["/proj/src/a.ts"])
      expect(ReadTool.paths({ filePath: "/etc/hosts" }, ctx)).toEqual(["/etc/hosts"])
      expect(ReadTool.paths({ filePath: "~/x" }, ctx)).toEqual(["/proj/~/x"])
    })

    it("declares a safe, cancellable, retryable read that is cut at the end", () => {
      expect(ReadTool).toMatchObject({
        id: "read",
        concurrencySafe: true,
        mutates: false,
        retrySafe: true,
        interruptBehavior: "cancel",
        truncate: "head",
        operations: ["file.read"]
      })
    })

    it("rejects a non-positive offset or limit at decode time", () => {
      expect(Result.isFailure(ReadTool.decode({ filePath: "a", offset: 0 }))).toBe(true)
      expect(Result.isFailure(ReadTool.decode({ filePath: "a", limit: 1.5 }))).toBe(true)
      expect(Result.isSuccess(ReadTool.decode({ filePath: "a", offset: 1, limit: 10 }))).toBe(true)
    })
  })

for (const mode of FS_MODES) readCases(mode)
